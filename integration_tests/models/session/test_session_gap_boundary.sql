{{ config(materialized='window_view') }}
-- rows exactly `gap` apart: 8:05, 8:07, 8:09, 8:11, 8:13 are 2 minutes apart, 8:17 is 4 after 8:13.
-- Flink merges session windows whose bounds touch (TimeWindow.intersects: start <= other.end and
-- end >= other.start, so [8:05, 8:07) and [8:07, 8:09) merge), and Spark's session_window does the
-- same (measured: 8:05 and 8:07 with gap '2 minutes' form one session [8:05, 8:09)). Streaming on
-- Spark therefore gives one session [8:05, 8:15) here; batch must agree.
select window_start, window_end, count(*) as n, sum(price) as price
from {{ window_views.session(ref('data_bid'), 'bidtime', '2 minutes') }}
group by window_start, window_end
