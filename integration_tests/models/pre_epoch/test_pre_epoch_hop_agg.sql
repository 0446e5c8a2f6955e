{{ config(materialized='window_view') }}
select window_start, window_end, count(*) as n, sum(amount) as total
from {{ window_views.hop(ref('data_pre_epoch'), 'ts', '5 minutes', '10 minutes') }}
group by window_start, window_end
