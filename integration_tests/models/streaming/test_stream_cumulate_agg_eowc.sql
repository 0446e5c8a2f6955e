{{ config(materialized='window_view', execution='streaming', emit='on_window_close',
          watermark={'column': 'bidtime', 'delay': '1 minute'}) }}
-- W = 8:16: the cumulating windows of [8:10, 8:20) ending at 8:18 and 8:20 are still open
select window_start, window_end, sum(price) as price, count(*) as bids
from {{ window_views.cumulate(ref('stream_bid'), 'bidtime', '2 minutes', '10 minutes') }}
group by window_start, window_end
