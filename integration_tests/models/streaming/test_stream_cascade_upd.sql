{{ config(materialized='window_view', execution='streaming', emit='on_update',
          watermark={'column': 'last_bid', 'delay': '0 seconds'}) }}
-- a streaming window view over a streaming on_window_close one (append-only: a closed window
-- never changes): 20-minute windows of the closed 10-minute windows, by their last bid.
-- The CTE leaves out the upstream's window_start / window_end, which the TVF adds anew.
with closed as (
  select last_bid, price, bids from {{ ref('test_stream_tumble_agg_eowc') }}
)
select window_start, window_end, sum(price) as price, sum(bids) as bids
from {{ window_views.tumble('closed', 'last_bid', '20 minutes') }}
group by window_start, window_end
