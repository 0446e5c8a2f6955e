-- over window (RisingWave example 1): price minus the previous price of the same stock
select stock_id, event_time, price,
  price - lag(price) over (partition by stock_id order by event_time) as price_diff
from {{ ref('stock_prices') }}
