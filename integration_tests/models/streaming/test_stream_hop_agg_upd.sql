{{ config(materialized='window_view', execution='streaming', emit='on_update',
          watermark={'column': 'bidtime', 'delay': '2 minutes'}) }}
select window_start, window_end, sum(price) as price, count(*) as bids
from {{ window_views.hop(ref('stream_bid'), 'bidtime', '5 minutes', '10 minutes') }}
group by window_start, window_end
