-- FLIP-145's HOP example: 10-minute windows every 5 minutes over the Bid table
{{ config(materialized='table') }}
select window_start, window_end, sum(price) as price
from {{ window_views.hop(ref('pkg_bids'), 'bidtime', '5 minutes', '10 minutes') }}
group by window_start, window_end
