{{ config(materialized='window_view', execution='streaming', emit='on_window_close',
          watermark={'column': 'bidtime', 'delay': '1 minute'}) }}
-- a window join of two streams: W = min(8:17, 8:17) - 1 minute = 8:16, so [8:00, 8:10) is
-- joined and emitted (A, C and D; D has no even-priced bid) and [8:10, 8:20) waits
select b.window_start, b.window_end, b.item, b.price, e.price as even_price
from {{ window_views.tumble(ref('stream_bid'), 'bidtime', '10 minutes') }} b
left join {{ window_views.tumble(ref('stream_bid_even'), 'bidtime', '10 minutes') }} e
  on b.item = e.item and b.window_start = e.window_start and b.window_end = e.window_end
