{{ config(materialized='window_view') }}
-- dbt's own checks on a batch over-window model: a contract and a unit test (schema.yml)
select
  stock_id,
  event_time,
  price - lag(price) over (partition by stock_id order by event_time) as price_diff
from {{ ref('data_stock_prices') }}
