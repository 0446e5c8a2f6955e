{{ config(materialized='window_view') }}
select window_start, window_end, window_time, count(*) as n, sum(amount) as total
from {{ window_views.tumble(ref('data_pre_epoch'), 'ts', '10 minutes') }}
group by window_start, window_end, window_time
