{{ config(materialized='window_view') }}
select window_start, window_end, window_time, count(*) as n, sum(price) as price
from {{ window_views.tumble(ref('data_bid'), 'bidtime', '5 minutes') }}
group by window_start, window_end, window_time
