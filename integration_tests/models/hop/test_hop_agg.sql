{{ config(materialized='window_view') }}
select window_start, window_end, sum(price) as price
from {{ window_views.hop(ref('data_bid'), 'bidtime', '5 minutes', '10 minutes') }}
group by window_start, window_end
