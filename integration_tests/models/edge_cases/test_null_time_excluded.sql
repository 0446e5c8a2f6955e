{{ config(materialized='window_view') }}
-- rows with a NULL time column belong to no window, in every TVF
with bids as (
  select bidtime, price, item from {{ ref('data_bid') }}
  union all
  select cast(null as timestamp) as bidtime, 100 as price, 'Z' as item
)
select 'tumble' as tvf, count(*) as n, sum(price) as price
from {{ window_views.tumble('bids', 'bidtime', '10 minutes') }}
union all
select 'hop', count(*), sum(price)
from {{ window_views.hop('bids', 'bidtime', '5 minutes', '10 minutes') }}
union all
select 'cumulate', count(*), sum(price)
from {{ window_views.cumulate('bids', 'bidtime', '2 minutes', '10 minutes') }}
union all
select 'session', count(*), sum(price)
from {{ window_views.session('bids', 'bidtime', '3 minutes') }}
