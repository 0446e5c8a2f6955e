{{ config(materialized='window_view', execution='streaming', emit='on_update',
          watermark={'column': 'bidtime', 'delay': '1 minute'}) }}
select window_start, window_end, sum(price) as price, count(*) as bids
from {{ window_views.session(ref('stream_bid'), 'bidtime', '3 minutes') }}
group by window_start, window_end
