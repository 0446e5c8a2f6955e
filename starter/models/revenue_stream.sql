-- streaming: each run processes the bids appended since the last one; a window is written once
-- the watermark (latest bid - 1 minute) passes its end
{{ config(materialized='window_view', execution='streaming', emit='on_window_close',
          watermark={'column': 'bidtime', 'delay': '1 minute'}) }}
select window_start, window_end, sum(price) as revenue, count(*) as bids
from {{ window_views.tumble(ref('bids_landing'), 'bidtime', '10 minutes') }}
group by window_start, window_end
