{{ config(materialized='window_view', execution='streaming', emit='on_window_close',
          watermark={'column': 'bidtime', 'delay': '1 minute'}) }}
-- window TopN: an over window partitioned by the window, computed once the window closes
select window_start, window_end, item, price, rn
from (
  select *, row_number() over (partition by window_start, window_end order by price desc) as rn
  from {{ window_views.tumble(ref('stream_bid'), 'bidtime', '10 minutes') }}
)
where rn <= 2
