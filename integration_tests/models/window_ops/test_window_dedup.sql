{{ config(materialized='window_view') }}
-- window deduplication: the first bid of each 10-minute window (TopN with n = 1)
select bidtime, price, item, window_start, window_end
from (
  select *, row_number() over (partition by window_start, window_end order by bidtime) as rn
  from {{ window_views.tumble(ref('data_bid'), 'bidtime', '10 minutes') }}
)
where rn = 1
