-- window_aggregate: a 30-minute window every minute per item, computed from 1-minute panes
-- (no row is copied into its 30 windows)
select * from {{ window_views.window_aggregate(
    ref('bids'),
    {'kind': 'hop', 'time_col': 'bidtime', 'size': '30 minutes', 'slide': '1 minute'},
    {'bids': 'count(*)', 'revenue': 'sum(price)', 'top_bid': 'max(price)', 'bidders': 'approx_count_distinct(bidder)'},
    group_by=['item']) }}
