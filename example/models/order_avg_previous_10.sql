-- over window (RisingWave example 2): a user's average over their previous 10 orders,
-- emitted once the watermark has passed the order
{{ config(emit='on_window_close', watermark={'column': 'order_time', 'delay': '30 minutes'}) }}
select user_id, order_id, order_time, amount,
  round(avg(amount) over (partition by user_id order by order_time rows between 10 preceding and 1 preceding), 2) as avg_previous_10
from {{ ref('orders') }}
