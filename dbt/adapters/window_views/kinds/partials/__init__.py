"""Aggregates kept as partials, the kinds' shared part: pane plans for HOP and CUMULATE
(panes.py), a window TVF + GROUP BY read as FLIP-145's window aggregation (window_aggregation.py)
and computed from panes in batch (tvf_panes.py), and a stream's partials: panes (slicing.py), a
SESSION's per open session (session_slicing.py), a TVF aggregate kept as panes (tvf_aggregate.py).
"""
