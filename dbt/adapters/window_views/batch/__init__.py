"""The batch engine (`execution='batch'`): the statement that builds a window view from all of its
input (statement.py), the watermark reached (watermark.py), a table built beside the model's and
swapped into place (swap.py), and incremental batch window views, their batches computed and
written one partition each (incremental.py).
"""
