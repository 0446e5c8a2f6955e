"""A stream's checkpoint side: every file and folder of a version (locations.py), the commit log
and READY records (commits.py), Spark's own checkpoint checked and repaired (checkpoint.py), one
run at a time (lock.py), rebuilds beside the live version (rebuild.py) and the run's context
(run_context.py).
"""
