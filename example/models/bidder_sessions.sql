-- SESSION: a bidder's bids closer than 5 minutes to each other form a session
select bidder, window_start as session_start, window_end as session_end, count(*) as bids, sum(price) as spent
from {{ window_views.session(ref('bids'), 'bidtime', '5 minutes', partition_by='bidder') }}
group by bidder, window_start, window_end
