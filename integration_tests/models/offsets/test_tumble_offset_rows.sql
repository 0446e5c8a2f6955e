{{ config(materialized='window_view') }}
select * from {{ window_views.tumble(ref('data_bid'), 'bidtime', '10 minutes', offset='1 minute') }}
