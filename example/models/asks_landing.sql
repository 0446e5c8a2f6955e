-- The sellers' asking prices, appended by a "loader" one delivery per run like bids_landing.
-- A streaming window join windows every input by the watermark column, so the asks' time is
-- landed under the bids' name for it.
{{ config(materialized='incremental', incremental_strategy='append') }}
select asktime as bidtime, ask, item, delivery from {{ ref('asks') }}
where delivery <= {{ var('delivery', 1) }}
{% if is_incremental() %}
  and delivery > (select coalesce(max(delivery), 0) from {{ this }})
{% endif %}
