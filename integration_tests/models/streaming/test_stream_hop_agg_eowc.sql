{{ config(materialized='window_view', execution='streaming', emit='on_window_close',
          watermark={'column': 'bidtime', 'delay': '2 minutes'}) }}
-- W = 8:17 - 2 minutes = 8:15: [8:00, 8:10) and [8:05, 8:15) are closed, [8:10, 8:20) and [8:15, 8:25) are not
select window_start, window_end, sum(price) as price, count(*) as bids
from {{ window_views.hop(ref('stream_bid'), 'bidtime', '5 minutes', '10 minutes') }}
group by window_start, window_end
