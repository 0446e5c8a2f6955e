{{ config(materialized='window_view') }}
select * from {{ window_views.session(ref('data_bid'), 'bidtime', '3 minutes') }}
