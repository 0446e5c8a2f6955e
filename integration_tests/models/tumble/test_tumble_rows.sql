{{ config(materialized='window_view') }}
-- FLIP-145: SELECT * FROM TABLE(TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES))
select * from {{ window_views.tumble(ref('data_bid'), 'bidtime', '10 minutes') }}
