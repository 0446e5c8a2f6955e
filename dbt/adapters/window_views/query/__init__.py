"""The one in-memory form of a model's query: dbt's compiled SQL parsed once with sqlglot
(analysis.py), the window TVFs read back from their markers as typed windows (tvf.py, windows.py),
intervals (intervals.py), the window columns under any name (window_columns.py), the SQL the
plugin generates as expressions (sqlexpr.py) and the catalog statements it runs (ddl.py),
rendered to text only where Spark receives them.
"""
