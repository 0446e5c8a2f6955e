{{ config(materialized='window_view') }}
-- the pane plan of HOP 5/10 minutes: FLIP-145's HOP aggregate table
select window_start, window_end, price
from {{ window_views.window_aggregate(ref('data_bid'),
     {'kind': 'hop', 'time_col': 'bidtime', 'slide': '5 minutes', 'size': '10 minutes'},
     {'price': 'sum(price)'}) }}
