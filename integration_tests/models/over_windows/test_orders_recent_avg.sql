{{ config(materialized='window_view') }}
-- RisingWave example 2 (order_time added to the output to identify the order)
select
  user_id,
  order_time,
  amount,
  avg(amount) over (
    partition by user_id
    order by order_time
    rows between 10 preceding and 1 preceding
  ) as recent_10_orders_avg_amount
from {{ ref('data_orders') }}
