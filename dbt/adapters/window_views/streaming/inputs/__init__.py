"""How a stream's inputs reach a micro-batch: one input or several in one shape (sides.py), the
idle clocks that move the watermark (idle.py), the columns the SQL reads (columns_read.py), late
rows read again from their files (batch_files.py) and whether the inputs are still the tables
the stream read (input_identity.py).
"""
