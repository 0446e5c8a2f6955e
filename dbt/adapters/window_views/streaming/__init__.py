"""execution='streaming': a Structured Streaming query over the upstream table whose
micro-batches run the model's own SQL on the rows that can still change a result.

Spark's streaming aggregation cannot serve here: it drops late rows without a word, refuses
update mode for session windows and OVER windows altogether, and cannot honour both emit modes
on the same SQL. So each micro-batch (foreachBatch) does what a window operator does, keeping
its state in files. One concern per module:

- plan.py: what the stream reads, computes and keeps, decided before anything runs;
- runner.py: tables, checkpoint and the query's lifecycle;
- batch_writer.py: one micro-batch, idempotent for its batch id;
- model_query.py: the model SQL over a batch's rows; output.py: what a batch writes;
- state.py: the rows and summaries kept between batches; commits.py: the commit log.

Every write of a batch goes through `storage`'s stage-then-publish protocol keyed by the batch
id, and a batch whose commit exists is skipped, so a replay after a crash changes nothing.
"""
