"""The streaming strategy per model kind and emit (`ModelShape` in base.py; window TVFs, sessions
and panes in window_shapes.py, over windows in over_shapes.py, a keyed Top-N in topn_shapes.py),
and what a strategy works with: the model query over a batch's rows, the output files, the state
kept between batches (rows, prefix summaries, pane partials).
"""
