-- Nexmark Query 7, highest bid: the bids with the highest price of their 10-second window
-- (nexmark-flink/src/main/resources/queries/q7.sql; TUMBLE(TABLE bid, ...) as the macro)
SELECT B.auction, B.bidder, B.price, B.dateTime, B.extra
from {{ source('nexmark', 'bid') }} B
JOIN (
  SELECT MAX(price) AS maxprice, window_end as dateTime
  FROM {{ window_views.tumble(source('nexmark', 'bid'), 'dateTime', '10 seconds') }}
  GROUP BY window_start, window_end
) B1
ON B.price = B1.maxprice
WHERE B.dateTime BETWEEN B1.dateTime - INTERVAL '10' SECOND AND B1.dateTime
