{{ config(materialized='window_view') }}
-- the pane plan of CUMULATE 2/10 minutes: FLIP-145's CUMULATE aggregate table
select window_start, window_end, price
from {{ window_views.window_aggregate(ref('data_bid'),
     {'kind': 'cumulate', 'time_col': 'bidtime', 'step': '2 minutes', 'size': '10 minutes'},
     {'price': 'sum(price)'}) }}
