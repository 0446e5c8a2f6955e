-- TUMBLE: revenue per 10-minute window
select window_start, window_end, sum(price) as revenue, count(*) as bids
from {{ window_views.tumble(ref('bids'), 'bidtime', '10 minutes') }}
group by window_start, window_end
