{{ config(materialized='window_view') }}
select window_start, window_end, sum(price) as price
from {{ window_views.tumble(ref('data_bid'), 'bidtime', '10 minutes') }}
group by window_start, window_end
