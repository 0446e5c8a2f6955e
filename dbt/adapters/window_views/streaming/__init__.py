"""execution='streaming': a Structured Streaming query over the upstream table whose
micro-batches run the model's own SQL on the rows that can still change a result.

Spark's streaming aggregation cannot serve here: it drops late rows without a word, refuses
update mode for session windows and OVER windows altogether, and cannot honour both emit modes
on the same SQL. So each micro-batch (foreachBatch) does what a window operator does, keeping
its state in files. The stream's plan is `plans/stream.py`, decided before anything runs; here:

- runner.py: tables, checkpoint and the query's lifecycle; result.py: what a run sums up;
- batch_writer.py: one micro-batch, idempotent for its batch id;
- shapes/: the strategy per model kind and emit, its output and state;
- inputs/: how the inputs reach a batch; commit/: the checkpoint, commit log, lock and rebuilds.

Every write of a batch goes through `storage`'s stage-then-publish protocol keyed by the batch
id, and a batch whose commit exists is skipped, so a replay after a crash changes nothing.
"""
