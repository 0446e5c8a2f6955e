-- CUMULATE: revenue since the start of each half hour, every 10 minutes
select window_start, window_end, sum(price) as revenue_so_far
from {{ window_views.cumulate(ref('bids'), 'bidtime', '10 minutes', '30 minutes') }}
group by window_start, window_end
