"""The Spark runtime, below everything that runs SQL: the embedded or Connect session
(session.py, connect.py), the warm Spark Connect server kept between dbt commands (warm_server.py)
and its warm-up (warm_up.py), the class-data archive that makes a JVM start fast
(class_archive.py), Delta Lake's jars and session settings (lakehouse.py), other processes on
this machine (processes.py) and Spark's messages read as text (spark_messages.py).
"""
