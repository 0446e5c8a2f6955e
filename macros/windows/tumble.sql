{#- TUMBLE: fixed, non-overlapping windows of `size`, aligned to the epoch shifted by `offset`. -#}
{% macro tumble(relation, time_col, size, offset=none) -%}
  {{ return(adapter.dispatch('tumble', 'window_views')(relation, time_col, size, offset)) }}
{%- endmacro %}

{% macro default__tumble(relation, time_col, size, offset=none) -%}
  {%- set rel = window_views._relation(relation, 'tumble') -%}
  {%- set ts = window_views._column(time_col, 'tumble', 'time_col') -%}
  {%- set size_us = window_views._interval_micros(size, 'tumble', 'size') -%}
  {%- set offset_us = window_views._interval_micros(offset, 'tumble', 'offset', allow_negative=true) if offset is not none else 0 -%}
  {%- set t = window_views._micros(ts) -%}
  {%- set start = '(' ~ t ~ ' - pmod(' ~ t ~ ' - ' ~ offset_us ~ ', ' ~ size_us ~ '))' -%}
(
  {{ '/* window_views.tumble(time_col=' ~ time_col ~ ', size=' ~ size ~ (', offset=' ~ offset if offset is not none else '') ~ ') */' }}
  select *,
    {{ window_views._window_bounds(start, start ~ ' + ' ~ size_us) }}
  from {{ rel }}
  where {{ ts }} is not null
)
{%- endmacro %}
