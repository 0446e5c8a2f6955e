{{ config(materialized='window_view', emit='on_window_close',
          watermark={'column': 'ts', 'delay': '5 minutes'}) }}
-- the RisingWave article's EMIT ON WINDOW CLOSE query: ts has a watermark with a 5-minute delay
select
  ts, pk, p, x,
  sum(x) over (partition by p order by ts rows 1 preceding) as sum_1_preceding,
  sum(x) over (partition by p order by ts rows between current row and 1 following) as sum_1_following,
  lead(x, 1) over (partition by p order by ts) as lead_x
from {{ ref('data_over_window_t') }}
