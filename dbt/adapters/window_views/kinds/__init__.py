"""One part per model kind: what recognises it (and refuses what a stream cannot keep), its state
and its reach; model_kind.py names the kinds and registry.py picks a model's kind once."""
