{{ config(materialized='incremental', incremental_strategy='append') }}
-- A second append-only input (the bids of even price), for the streaming window join and union.
select bidtime, price, item from {{ ref('data_bid') }}
where price % 2 = 0
{% if is_incremental() %}
  and bidtime > (select max(bidtime) from {{ this }})
{% endif %}
