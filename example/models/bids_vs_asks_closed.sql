-- streaming window join (FLIP-145): per item and 10-minute window with both bids and asks, the
-- best bid and the lowest ask, each window written once the watermark (the smaller of the two
-- inputs') closes it
{{ config(execution='streaming', emit='on_window_close',
          watermark={'column': 'bidtime', 'delay': '5 minutes'}) }}
select b.item, b.window_start, b.window_end, b.top_bid, a.lowest_ask
from (
  select item, window_start, window_end, max(price) as top_bid
  from {{ window_views.tumble(ref('bids_landing'), 'bidtime', '10 minutes') }}
  group by item, window_start, window_end
) b
join (
  select item, window_start, window_end, min(ask) as lowest_ask
  from {{ window_views.tumble(ref('asks_landing'), 'bidtime', '10 minutes') }}
  group by item, window_start, window_end
) a
  on b.item = a.item and b.window_start = a.window_start and b.window_end = a.window_end
