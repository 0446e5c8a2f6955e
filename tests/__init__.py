"""The plugin's tests: tests/unit (no Spark), tests/functional (a real local Spark), and their
helpers in tests/support (imported as `tests.support.<module>`; fixtures are in conftest.py)."""
