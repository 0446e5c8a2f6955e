{{ config(materialized='window_view') }}
-- window join: two window aggregates of the same table on equal window_start and window_end
with totals as (
  select window_start, window_end, sum(price) as total
  from {{ window_views.tumble(ref('data_bid'), 'bidtime', '5 minutes') }}
  group by window_start, window_end
),
big_bids as (
  select window_start, window_end, count(*) as n_big, max(price) as max_big
  from {{ window_views.tumble(ref('data_bid'), 'bidtime', '5 minutes') }}
  where price >= 4
  group by window_start, window_end
)
select t.window_start, t.window_end, t.total, b.n_big, b.max_big
from totals t
left join big_bids b
  on t.window_start = b.window_start and t.window_end = b.window_end
