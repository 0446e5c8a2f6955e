from dbt.adapters.base import AdapterPlugin

from dbt.adapters.window_views.connections import (  # noqa: F401
    WindowViewsConnectionManager,
    WindowViewsCredentials,
)
from dbt.adapters.window_views.impl import WindowViewsAdapter
from dbt.include import window_views

Plugin = AdapterPlugin(
    adapter=WindowViewsAdapter,  # type: ignore[arg-type]
    credentials=WindowViewsCredentials,
    include_path=window_views.PACKAGE_PATH,
    dependencies=["spark"],
)
