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
