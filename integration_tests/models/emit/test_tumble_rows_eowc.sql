{{ config(materialized='window_view', emit='on_window_close',
          watermark={'column': 'bidtime', 'delay': '1 minute'}) }}
select * from {{ window_views.tumble(ref('data_bid'), 'bidtime', '10 minutes') }}
