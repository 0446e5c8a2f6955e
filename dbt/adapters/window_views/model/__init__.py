"""What the user declared for a model: its `window_view` config parsed once (config.py) and its
direct inputs, as dbt's manifest or graph gives them (upstream.py).
"""
