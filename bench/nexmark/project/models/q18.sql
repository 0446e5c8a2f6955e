-- Nexmark Query 18, find last bid: each bidder's last bid on each auction (deduplication)
-- (nexmark-flink/src/main/resources/queries/q18.sql)
-- A bidder's last bid on an auction can change with any later bid, so no row is ever final:
-- in either execution the table is the current result (emit='on_update'), not windows that
-- the watermark closed.
{{ config(emit='on_update') }}
SELECT auction, bidder, price, channel, url, dateTime, extra
 FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY bidder, auction ORDER BY dateTime DESC) AS rank_number
       FROM {{ source('nexmark', 'bid') }})
 WHERE rank_number <= 1
