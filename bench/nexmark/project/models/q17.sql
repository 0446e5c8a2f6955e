-- Nexmark Query 17, auction statistics report: an auction's bids of a day and their prices
-- (nexmark-flink/src/main/resources/queries/q17.sql as written; its GROUP BY of the day is a
-- TUMBLE of 1 day to the plugin)
SELECT
     auction,
     DATE_FORMAT(dateTime, 'yyyy-MM-dd') as `day`,
     count(*) AS total_bids,
     count(*) filter (where price < 10000) AS rank1_bids,
     count(*) filter (where price >= 10000 and price < 1000000) AS rank2_bids,
     count(*) filter (where price >= 1000000) AS rank3_bids,
     min(price) AS min_price,
     max(price) AS max_price,
     avg(price) AS avg_price,
     sum(price) AS sum_price
FROM {{ source('nexmark', 'bid') }}
GROUP BY auction, DATE_FORMAT(dateTime, 'yyyy-MM-dd')
