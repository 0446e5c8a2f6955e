{#- The window arithmetic, in epoch microseconds: the one source for the TVF macros and for the
    plugin's Python (tvf.py, panes.py), which renders this file with a plain jinja2 Environment.
    So it stays self-contained: no dbt context (adapter, return, other macros) in here. -#}

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
