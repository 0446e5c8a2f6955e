{{ config(materialized='window_view', execution='streaming', emit='on_window_close',
          watermark={'column': 'bidtime', 'delay': '1 minute'}) }}
-- one batch of 6 bids: W = 8:17 - 1 minute = 8:16, so [8:00, 8:10) is emitted and [8:10, 8:20) waits
select window_start, window_end, sum(price) as price, count(*) as bids, max(bidtime) as last_bid
from {{ window_views.tumble(ref('stream_bid'), 'bidtime', '10 minutes') }}
group by window_start, window_end
