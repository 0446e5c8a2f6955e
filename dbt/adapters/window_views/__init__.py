from dbt.adapters.base import AdapterPlugin

from dbt.adapters.window_views import compile_checks
from dbt.adapters.window_views.connections import (  # noqa: F401
    WindowViewsConnectionManager,
    WindowViewsCredentials,
)
from dbt.adapters.window_views.impl import WindowViewsAdapter
from dbt.include import window_views

# dbt-core has no adapter hook in compilation: wrap Compiler.compile_node (see compile_checks.py)
compile_checks.install()

Plugin = AdapterPlugin(
    adapter=WindowViewsAdapter,  # type: ignore[arg-type]
    credentials=WindowViewsCredentials,
    include_path=window_views.PACKAGE_PATH,
    dependencies=["spark"],
)
