-- Nexmark Query 11, user sessions: the bids of each bidder's sessions (10-second gap)
-- (nexmark-flink/src/main/resources/queries/q11.sql). Nexmark groups by Flink's legacy
-- SESSION(B.dateTime, INTERVAL '10' SECOND) and selects SESSION_START / SESSION_END; here the
-- session TVF per bidder gives them as window_start / window_end.
SELECT
    B.bidder,
    count(*) as bid_count,
    window_start as starttime,
    window_end as endtime
FROM {{ window_views.session(source('nexmark', 'bid'), 'dateTime', '10 seconds', partition_by='bidder') }} B
GROUP BY B.bidder, window_start, window_end
