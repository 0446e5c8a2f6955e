{{ config(materialized='window_view', execution='streaming', emit='on_window_close',
          watermark={'column': 'bidtime', 'delay': '1 minute'}) }}
-- gap 3 minutes: sessions [8:05, 8:16) (5 bids) and [8:17, 8:20); W = 8:16 closes the first only
select window_start, window_end, sum(price) as price, count(*) as bids
from {{ window_views.session(ref('stream_bid'), 'bidtime', '3 minutes') }}
group by window_start, window_end
