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
    "reserved_prefix": "_wv_",
    "names": {
      "row": "_wv_row",
      "time": "_wv_t",
      "session": "_wv_session",
      "new_session": "_wv_new",
      "windows": "_wv_windows",
      "window_start": "_wv_s",
      "step": "_wv_j",
      "owned": "_wv_owned",
      "panes": "_wv_panes"
    },
    "placeholders": {
      "time": "_wv_arg_time",
      "offset": "_wv_arg_offset",
      "unit": "_wv_arg_unit",
      "start": "_wv_arg_start",
      "end": "_wv_arg_end",
      "value": "_wv_arg_value"
    },
    "templates": {
      "window_floor": "(_wv_arg_time - PMOD(_wv_arg_time - _wv_arg_offset, _wv_arg_unit))",
      "window_bounds": "TIMESTAMP_MICROS(_wv_arg_start) AS window_start,\n  TIMESTAMP_MICROS(_wv_arg_end) AS window_end,\n  TIMESTAMP_MICROS(_wv_arg_end - 1) AS window_time",
      "epoch_micros": "UNIX_MICROS(CAST(_wv_arg_value AS TIMESTAMP))"
    }
  }) }}
{%- endmacro %}
