-- Nexmark Query 19, auction top-10 price: the 10 highest bids of each auction (Top-N)
-- (nexmark-flink/src/main/resources/queries/q19.sql)
-- An auction's top 10 can change with any later bid, so no row is ever final: in either
-- execution the table is the current result (emit='on_update'), not windows that the
-- watermark closed.
{{ config(emit='on_update') }}
SELECT * FROM
(SELECT *, ROW_NUMBER() OVER (PARTITION BY auction ORDER BY price DESC) AS rank_number
 FROM {{ source('nexmark', 'bid') }})
WHERE rank_number <= 10
