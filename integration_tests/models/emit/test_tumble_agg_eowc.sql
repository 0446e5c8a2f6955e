{{ config(materialized='window_view', emit='on_window_close',
          watermark={'column': 'bidtime', 'delay': '1 minute'}) }}
-- W = 8:17 - 1 minute = 8:16: [8:10, 8:20) is still open
select window_start, window_end, sum(price) as price
from {{ window_views.tumble(ref('data_bid'), 'bidtime', '10 minutes') }}
group by window_start, window_end
