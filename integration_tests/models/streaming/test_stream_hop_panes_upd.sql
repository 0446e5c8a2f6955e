{{ config(materialized='window_view', execution='streaming', emit='on_update',
          watermark={'column': 'bidtime', 'delay': '2 minutes'}) }}
-- test_stream_hop_agg_upd's windows by window slicing: the stream keeps 5-minute pane partials
select window_start, window_end, price, bids
from {{ window_views.window_aggregate(ref('stream_bid'),
    {'kind': 'hop', 'time_col': 'bidtime', 'slide': '5 minutes', 'size': '10 minutes'},
    {'price': 'sum(price)', 'bids': 'count(*)'}) }}
