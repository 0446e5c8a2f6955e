{{ config(materialized='window_view') }}
-- size not a multiple of slide: windows of 10 minutes starting every 4 minutes (at multiples of
-- 4 minutes since the epoch: ... 7:56, 8:00, 8:04 ...); a row is in up to ceil(10/4) = 3 of them
select window_start, window_end, count(*) as n, sum(price) as price
from {{ window_views.hop(ref('data_bid'), 'bidtime', '4 minutes', '10 minutes') }}
group by window_start, window_end
