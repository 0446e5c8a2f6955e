"""The Spark-free plans, built from a model's query form and config before anything runs: the
`WindowViewPlan` of every model (window_view.py), the stream's `StreamPlan` (stream.py) and its
pane partials (slicing.py, session_slicing.py, tvf_aggregate.py), an incremental batch window
view's periods and the reads of one batch (batches.py, batch_reads.py), and the reads under
dbt's event-time filter (filtered_reads.py, over_reads.py). Compile time and run time read the
same plan, so they cannot disagree.
"""
