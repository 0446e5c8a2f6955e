"""Where a window view's files live and how they are reached: locations as users write them
(paths.py), one file interface chosen by scheme and by where the code runs (filesystems.py), a
table's files (table_files.py), the streaming commit protocol's stage-then-publish
(commit_files.py), and how a batch build replaces its table, one part per file format
(table_format.py; Delta Lake's in delta.py, parquet's rename swap in batch/swap.py).
"""
