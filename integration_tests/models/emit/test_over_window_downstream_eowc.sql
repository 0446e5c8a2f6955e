{{ config(materialized='window_view', emit='on_window_close',
          watermark={'column': 'ts', 'delay': '5 minutes'}) }}
-- an aggregate over an over window sees only the closed rows (W = 10:12: p=1 10:00, 10:02, 10:06;
-- p=2 10:01)
with leads as (
  select p, ts, lead(x, 1) over (partition by p order by ts) as lead_x
  from {{ ref('data_over_window_t') }}
)
select p, count(*) as n, sum(lead_x) as sum_lead_x
from leads
group by p
