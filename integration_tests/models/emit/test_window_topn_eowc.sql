{{ config(materialized='window_view', emit='on_window_close',
          watermark={'column': 'bidtime', 'delay': '1 minute'}) }}
select window_start, window_end, item, price, rn
from (
  select *, row_number() over (partition by window_start, window_end order by price desc) as rn
  from {{ window_views.tumble(ref('data_bid'), 'bidtime', '10 minutes') }}
)
where rn <= 2
