{#- The window arithmetic, in epoch microseconds, for the TVF macros: the SQL the plugin's Python
    builds (sqlexpr.window_floor, window_bounds, epoch_micros), as templates made from it
    (rules.py, read from _rules.sql) whose placeholder columns these macros replace. Offsets and
    units replace theirs before the time does, so no value is read back as a placeholder. -#}

{#- the latest window start at or before t: floor to `unit_us` after `offset_us`, also for t
    before the epoch (pmod is never negative) -#}
{% macro _window_floor(t, offset_us, unit_us) -%}
  {%- set rules = window_views._rules() -%}
  {%- set p = rules.placeholders -%}
  {{ return(rules.templates.window_floor.replace(p.offset, offset_us | string).replace(p.unit, unit_us | string).replace(p.time, t)) }}
{%- endmacro %}


{#- the three window columns of a window [start, end) -#}
{% macro _window_bounds(start_sql, end_sql) -%}
  {%- set rules = window_views._rules() -%}
  {%- set p = rules.placeholders -%}
  {{ return(rules.templates.window_bounds.replace(p.end, end_sql).replace(p.start, start_sql)) }}
{%- endmacro %}


{#- a timestamp expression as microseconds since the epoch -#}
{% macro _micros(time_sql) -%}
  {%- set rules = window_views._rules() -%}
  {{ return(rules.templates.epoch_micros.replace(rules.placeholders.value, time_sql)) }}
{%- endmacro %}
