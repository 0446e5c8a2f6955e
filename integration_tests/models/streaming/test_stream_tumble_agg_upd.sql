{{ config(materialized='window_view', execution='streaming', emit='on_update',
          watermark={'column': 'bidtime', 'delay': '1 minute'}) }}
-- on_update: every window as it stands, the open [8:10, 8:20) included
select window_start, window_end, sum(price) as price, count(*) as bids
from {{ window_views.tumble(ref('stream_bid'), 'bidtime', '10 minutes') }}
group by window_start, window_end
