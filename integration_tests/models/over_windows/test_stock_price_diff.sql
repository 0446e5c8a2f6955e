{{ config(materialized='window_view') }}
-- RisingWave example 1
select
  stock_id,
  event_time,
  price - lag(price) over (partition by stock_id order by event_time) as price_diff
from {{ ref('data_stock_prices') }}
