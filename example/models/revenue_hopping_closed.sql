-- HOP: 10-minute windows every 5 minutes, only the windows the watermark has closed
{{ config(emit='on_window_close', watermark={'column': 'bidtime', 'delay': '2 minutes'}) }}
select window_start, window_end, sum(price) as revenue
from {{ window_views.hop(ref('bids'), 'bidtime', '5 minutes', '10 minutes') }}
group by window_start, window_end
