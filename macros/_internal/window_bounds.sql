{#- The window arithmetic, in epoch microseconds, for the TVF macros: the Jinja twin of
    sqlexpr.window_floor / window_bounds in the plugin's Python, which the tests hold to the same
    expressions (tests/unit/test_tvf.py). No dbt context in here, so those tests render it as is. -#}

{#- the latest window start at or before t: floor to `unit_us` after `offset_us`, also for t
    before the epoch (pmod is never negative) -#}
{% macro _window_floor(t, offset_us, unit_us) -%}
({{ t }} - pmod({{ t }} - {{ offset_us }}, {{ unit_us }}))
{%- endmacro %}


{#- the three window columns of a window [start, end) -#}
{% macro _window_bounds(start_sql, end_sql) -%}
timestamp_micros({{ start_sql }}) as window_start,
  timestamp_micros({{ end_sql }}) as window_end,
  timestamp_micros({{ end_sql }} - 1) as window_time
{%- endmacro %}
