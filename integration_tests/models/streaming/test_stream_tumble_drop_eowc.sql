{{ config(materialized='window_view', execution='streaming', emit='on_window_close', late_data='drop',
          watermark={'column': 'bidtime', 'delay': '1 minute'}) }}
-- late_data='drop': no late table; the output is the same as with the late table
select window_start, window_end, sum(price) as price, count(*) as bids
from {{ window_views.tumble(ref('stream_bid'), 'bidtime', '10 minutes') }}
group by window_start, window_end
