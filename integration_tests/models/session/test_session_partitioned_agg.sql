{{ config(materialized='window_view') }}
-- a session per price parity; the TVF reads a CTE by name
with bids as (
  select *, price % 2 as parity from {{ ref('data_bid') }}
)
select parity, window_start, window_end, count(*) as n, sum(price) as price
from {{ window_views.session('bids', 'bidtime', '3 minutes', partition_by='parity') }}
group by parity, window_start, window_end
