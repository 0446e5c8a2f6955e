{{ config(materialized='incremental', incremental_strategy='append') }}
-- The append-only input of the streaming window views: each run appends the seed's bids newer
-- than the newest one already here, as a loader would. A streaming window view cannot read the
-- seed itself: `dbt seed` rewrites its table in place, which a stream would read again as new rows.
-- `parity` is the key test_stream_session_partitioned_upd partitions its sessions by.
select bidtime, price, item, price % 2 as parity from {{ ref('data_bid') }}
{% if is_incremental() %}
where bidtime > (select max(bidtime) from {{ this }})
{% endif %}
