{#- Generated from dbt/adapters/window_views/rules.py: do not edit. After changing a rule there,
    run `python -m dbt.adapters.window_views.rules` (tests/unit/test_rules.py fails until then). -#}
{% macro _rules() -%}
  {{ return({
    "interval_pattern": "(?i)^\\s*([+-]?)\\s*([0-9]{1,12})\\s+(second|minute|hour|day)s?\\s*$",
    "interval_units": {
      "second": 1000000,
      "minute": 60000000,
      "hour": 3600000000,
      "day": 86400000000
    },
    "interval_allowed": "'<n> <unit>' with unit second(s), minute(s), hour(s) or day(s), e.g. '10 minutes'",
    "interval_max_days": 36500,
    "interval_max_micros": 3153600000000000,
    "name_pattern": "^[A-Za-z_][A-Za-z0-9_]*$",
    "name_rule": "must be a column name (letters, digits, underscores)",
    "reserved_prefix": "_wv_"
  }) }}
{%- endmacro %}
