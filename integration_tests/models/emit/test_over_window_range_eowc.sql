{{ config(materialized='window_view', emit='on_window_close',
          watermark={'column': 'ts', 'delay': '5 minutes'}) }}
-- RANGE frame reaching 3 minutes ahead: a row is out when ts + 3 minutes <= W = 10:12
select
  ts, pk, p, x,
  sum(x) over (partition by p order by ts range between current row and interval 3 minutes following) as sum_next_3_minutes
from {{ ref('data_over_window_t') }}
