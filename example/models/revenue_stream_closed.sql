-- streaming, on_window_close: each 10-minute window appears once, when the watermark
-- (latest bid seen - 5 minutes) passes its end, and never changes; late bids go to
-- revenue_stream_closed__late
{{ config(execution='streaming', emit='on_window_close',
          watermark={'column': 'bidtime', 'delay': '5 minutes'}) }}
select window_start, window_end, sum(price) as revenue, count(*) as bids
from {{ window_views.tumble(ref('bids_landing'), 'bidtime', '10 minutes') }}
group by window_start, window_end
