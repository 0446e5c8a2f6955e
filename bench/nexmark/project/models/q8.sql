-- Nexmark Query 8, monitor new users: the people who registered and opened an auction in the
-- same 10 seconds (nexmark-flink/src/main/resources/queries/q8.sql; TUMBLE as the macro)
SELECT P.id, P.name, P.starttime
FROM (
  SELECT id, name,
        window_start AS starttime,
        window_end AS endtime
  FROM {{ window_views.tumble(source('nexmark', 'person'), 'dateTime', '10 seconds') }}
  GROUP BY id, name, window_start, window_end
) P
JOIN (
  SELECT seller,
        window_start AS starttime,
        window_end AS endtime
  FROM {{ window_views.tumble(source('nexmark', 'auction'), 'dateTime', '10 seconds') }}
  GROUP BY seller, window_start, window_end
) A
ON P.id = A.seller AND P.starttime = A.starttime AND P.endtime = A.endtime
