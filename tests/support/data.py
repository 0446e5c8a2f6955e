"""Input tables the tests share."""

# FLIP-145's Bid table (its times are on 2020-04-15)
FLIP145_BID = """\
bidtime,price,item
2020-04-15 08:07:00,2,A
2020-04-15 08:11:00,3,B
2020-04-15 08:05:00,4,C
2020-04-15 08:09:00,5,D
2020-04-15 08:13:00,1,E
2020-04-15 08:17:00,6,F
"""

# a compiled model SQL with the marker a `tumble` macro renders (as `dbt compile` writes it)
TUMBLE_COMPILED = """
select b.window_start, b.window_end, sum(b.price) as price
from (
  /* window_views:tvf:v1 {"kind": "tumble", "time_col": "bidtime", "size_us": 600000000, "offset_us": 0, "text": {"size": "10 minutes"}} */
  select *, 1 as window_start, 2 as window_end from s.bid where bidtime is not null
) b
group by 1, 2
"""
