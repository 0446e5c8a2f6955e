-- The append-only table a loader fills: streaming window views read only inputs that grow by
-- appends (a dbt source, an incremental model like this one, a streaming on_window_close view).
-- Here the "loader" is this model: `--vars '{delivery: 2}'` appends the second delivery.
{{ config(materialized='incremental', incremental_strategy='append') }}
with deliveries as (
  select bidtime, price, item, bidder, 1 as delivery from {{ ref('bids') }}
  union all
  select bidtime, price, item, bidder, 2 as delivery from {{ ref('bids_delivery_2') }}
)
select * from deliveries
where delivery <= {{ var('delivery', 1) }}
{% if is_incremental() %}
  and delivery > (select coalesce(max(delivery), 0) from {{ this }})
{% endif %}
