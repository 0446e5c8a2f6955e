{{ config(materialized='window_view', execution='streaming', emit='on_window_close',
          watermark={'column': 'bidtime', 'delay': '1 minute'}) }}
-- a union of two streams: [8:00, 8:10) holds A, C, D and again A, C (even prices)
with bids as (
  select bidtime, price from {{ ref('stream_bid') }}
  union all
  select bidtime, price from {{ ref('stream_bid_even') }}
)
select window_start, window_end, sum(price) as price, count(*) as bids
from {{ window_views.tumble('bids', 'bidtime', '10 minutes') }}
group by window_start, window_end
