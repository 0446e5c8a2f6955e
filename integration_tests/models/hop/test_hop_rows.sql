{{ config(materialized='window_view') }}
-- FLIP-145: HOP(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '5' MINUTES, INTERVAL '10' MINUTES)
select * from {{ window_views.hop(ref('data_bid'), 'bidtime', '5 minutes', '10 minutes') }}
