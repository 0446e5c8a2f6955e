-- streaming, on_update: every 10-minute window as it stands, the open ones included,
-- revised when new bids arrive
{{ config(execution='streaming', emit='on_update',
          watermark={'column': 'bidtime', 'delay': '5 minutes'}) }}
select window_start, window_end, sum(price) as revenue, count(*) as bids
from {{ window_views.tumble(ref('bids_landing'), 'bidtime', '10 minutes') }}
group by window_start, window_end
