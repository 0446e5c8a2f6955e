{{ config(materialized='window_view', execution='streaming', emit='on_update',
          watermark={'column': 'bidtime', 'delay': '1 minute'}) }}
-- a session per price parity (a column of the upstream table: the streaming runner keeps and
-- forgets rows per session key, so the key must be an input column, not one computed here)
select parity, window_start, window_end, count(*) as n, sum(price) as price
from {{ window_views.session(ref('stream_bid'), 'bidtime', '3 minutes', partition_by='parity') }}
group by parity, window_start, window_end
