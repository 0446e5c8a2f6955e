{{ config(materialized='window_view') }}
-- TUMBLE 10 minutes through window_aggregate: FLIP-145's TUMBLE aggregate table
select window_start, window_end, price
from {{ window_views.window_aggregate(ref('data_bid'),
     {'kind': 'tumble', 'time_col': 'bidtime', 'size': '10 minutes'},
     {'price': 'sum(price)'}) }}
