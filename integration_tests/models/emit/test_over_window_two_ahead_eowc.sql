{{ config(materialized='window_view', emit='on_window_close',
          watermark={'column': 'ts', 'delay': '5 minutes'}) }}
-- frames ending 2 rows ahead wait for the 2nd following row: W = 10:12
select
  ts, pk, p, x,
  sum(x) over (partition by p order by ts rows between 1 following and 2 following) as sum_next_2,
  lead(x, 2) over (partition by p order by ts) as lead_2,
  lag(x, 2) over (partition by p order by ts) as lag_2
from {{ ref('data_over_window_t') }}
