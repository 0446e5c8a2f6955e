{{ config(materialized='window_view', execution='streaming', emit='on_window_close',
          watermark={'column': 'bidtime', 'delay': '1 minute'}) }}
-- dbt's own checks on a streaming window TVF model and its late table (schema.yml): one batch of
-- 6 bids, W = 8:16, so [8:00, 8:10) is emitted; the first batch has no late rows
select window_start, window_end, sum(price) as price, count(*) as bids
from {{ window_views.tumble(ref('stream_bid'), 'bidtime', '10 minutes') }}
group by window_start, window_end
