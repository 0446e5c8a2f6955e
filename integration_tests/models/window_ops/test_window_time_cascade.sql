{{ config(materialized='window_view') }}
-- cascading windows: 5-minute aggregates rolled up into 10-minute windows on their window_time
-- (window_end - 1 us keeps [8:05, 8:10) inside [8:00, 8:10))
with five_minutes as (
  select window_time as five_minute_time, count(*) as n, sum(price) as price
  from {{ window_views.tumble(ref('data_bid'), 'bidtime', '5 minutes') }}
  group by window_start, window_end, window_time
)
select window_start, window_end, sum(n) as n, sum(price) as price
from {{ window_views.tumble('five_minutes', 'five_minute_time', '10 minutes') }}
group by window_start, window_end
