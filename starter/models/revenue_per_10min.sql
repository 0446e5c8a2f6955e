-- batch: rebuilt from all bids on each run
{{ config(materialized='window_view') }}
select window_start, window_end, sum(price) as revenue
from {{ window_views.tumble(ref('bids'), 'bidtime', '10 minutes') }}
group by window_start, window_end
