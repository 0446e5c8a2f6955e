{{ config(materialized='window_view') }}
select window_start, window_end, sum(price) as price
from {{ window_views.cumulate(ref('data_bid'), 'bidtime', '2 minutes', '10 minutes') }}
group by window_start, window_end
