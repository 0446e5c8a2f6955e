-- window TopN: the 2 most valuable items of each 10-minute window
with per_item as (
  select window_start, window_end, item, sum(price) as revenue
  from {{ window_views.tumble(ref('bids'), 'bidtime', '10 minutes') }}
  group by window_start, window_end, item
)
select * from (
  select *, row_number() over (partition by window_start, window_end order by revenue desc, item) as rank
  from per_item
) where rank <= 2
