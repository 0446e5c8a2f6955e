{{ config(materialized='window_view') }}
-- slide larger than size: 5-minute windows every 10 minutes; rows in the gaps belong to no window
select window_start, window_end, count(*) as n, sum(price) as price
from {{ window_views.hop(ref('data_bid'), 'bidtime', '10 minutes', '5 minutes') }}
group by window_start, window_end
