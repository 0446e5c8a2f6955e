{{ config(materialized='window_view') }}
select window_start, window_end, count(*) as n, sum(price) as price
from {{ window_views.tumble(ref('data_bid'), 'bidtime', '10 minutes', offset='-1 minute') }}
group by window_start, window_end
