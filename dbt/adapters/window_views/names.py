"""Names the plugin reserves in the user's SQL and tables: one prefix for every internal view
and column, so a user's column can never collide with one."""

RESERVED_PREFIX = "_wv_"


def internal(name: str) -> str:
    """An internal view or column name: the reserved prefix and `name`."""
    return f"{RESERVED_PREFIX}{name}"


def is_reserved(column: str) -> bool:
    return column.lower().startswith(RESERVED_PREFIX)
