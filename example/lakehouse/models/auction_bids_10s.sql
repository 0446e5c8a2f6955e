-- Streaming: each run reads the bids the topic received since the last one (their offsets are in
-- the checkpoint beside the table on s3a) and writes each 10-second window once the watermark has
-- closed it, 3 seconds behind the latest bid: Nexmark delays a bid by at most 3 seconds.
{{ config(execution='streaming', emit='on_window_close',
          watermark={'column': 'dateTime', 'delay': '3 seconds'}) }}
select auction, window_start, window_end, count(*) as bids, max(price) as top_price
from {{ window_views.tumble(source('nexmark', 'bids'), 'dateTime', '10 seconds') }}
group by auction, window_start, window_end
