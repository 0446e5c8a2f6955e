-- Nexmark Query 5, hot items: the auctions with the most bids in the last 10 seconds, every
-- 2 seconds (nexmark-flink/src/main/resources/queries/q5.sql; HOP(TABLE bid, ...) as the macro)
SELECT AuctionBids.auction, AuctionBids.num
 FROM (
   SELECT
     auction,
     count(*) AS num,
     window_start AS starttime,
     window_end AS endtime
     FROM {{ window_views.hop(source('nexmark', 'bid'), 'dateTime', '2 seconds', '10 seconds') }}
     GROUP BY auction, window_start, window_end
 ) AS AuctionBids
 JOIN (
   SELECT
     max(CountBids.num) AS maxn,
     CountBids.starttime,
     CountBids.endtime
   FROM (
     SELECT
       count(*) AS num,
       window_start AS starttime,
       window_end AS endtime
     FROM {{ window_views.hop(source('nexmark', 'bid'), 'dateTime', '2 seconds', '10 seconds') }}
     GROUP BY auction, window_start, window_end
     ) AS CountBids
   GROUP BY CountBids.starttime, CountBids.endtime
 ) AS MaxBids
 ON AuctionBids.starttime = MaxBids.starttime AND
    AuctionBids.endtime = MaxBids.endtime AND
    AuctionBids.num >= MaxBids.maxn
