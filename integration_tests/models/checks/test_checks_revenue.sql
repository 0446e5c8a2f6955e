{{ config(materialized='window_view') }}
-- dbt's own checks on a batch window TVF model: data tests, a contract and a unit test (schema.yml)
select window_start, window_end, sum(price) as price, count(*) as bids
from {{ window_views.tumble(ref('data_bid'), 'bidtime', '10 minutes') }}
group by window_start, window_end
