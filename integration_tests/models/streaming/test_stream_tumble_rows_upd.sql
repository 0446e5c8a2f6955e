{{ config(materialized='window_view', execution='streaming', emit='on_update',
          watermark={'column': 'bidtime', 'delay': '1 minute'}) }}
-- not an aggregate: every bid with its window
select * from {{ window_views.tumble(ref('stream_bid'), 'bidtime', '10 minutes') }}
