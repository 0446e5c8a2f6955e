{{ config(materialized='window_view') }}
-- FLIP-145's CUMULATE tables were produced with a 2-minute step (its SQL text says 5 minutes)
select * from {{ window_views.cumulate(ref('data_bid'), 'bidtime', '2 minutes', '10 minutes') }}
