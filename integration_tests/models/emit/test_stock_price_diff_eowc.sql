{{ config(materialized='window_view', emit='on_window_close',
          watermark={'column': 'event_time', 'delay': '2 minutes'}) }}
select
  stock_id,
  event_time,
  price - lag(price) over (partition by stock_id order by event_time) as price_diff
from {{ ref('data_stock_prices') }}
