{{ config(materialized='window_view') }}
-- window TopN: the 2 highest-priced bids of each 10-minute window
select window_start, window_end, item, price, rn
from (
  select *, row_number() over (partition by window_start, window_end order by price desc) as rn
  from {{ window_views.tumble(ref('data_bid'), 'bidtime', '10 minutes') }}
)
where rn <= 2
