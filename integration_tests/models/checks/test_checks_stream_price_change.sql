{{ config(materialized='window_view', execution='streaming', emit='on_window_close',
          watermark={'column': 'bidtime', 'delay': '1 minute'}) }}
-- dbt's own checks on a streaming over-window model: a contract and a unit test (schema.yml)
select item, bidtime, price, price - lag(price) over (partition by parity order by bidtime) as change
from {{ ref('stream_bid') }}
