{#- TUMBLE: fixed, non-overlapping windows of `size`, aligned to the epoch shifted by `offset`. -#}
{% macro tumble(relation, time_col, size, offset=none) -%}
  {{ return(adapter.dispatch('tumble', 'window_views')(relation, time_col, size, offset)) }}
{%- endmacro %}

{% macro default__tumble(relation, time_col, size, offset=none) -%}
  {%- if not execute -%}
    {{ return(window_views._unchecked(relation)) }}
  {%- endif -%}
  {%- set rel = window_views._relation(relation, 'tumble') -%}
  {%- set spec = window_views._window_spec('tumble', time_col, size=size, offset=offset) -%}
  {%- set read = window_views._window_read(relation, rel, spec, 'tumble') -%}
  {%- set ts = adapter.quote(time_col) -%}
  {%- set start = window_views._window_floor(window_views._micros(ts), spec.offset_us, spec.size_us) -%}
{%- set windowed -%}
(
  {{ window_views._tvf_marker(spec) }}
  select *,
    {{ window_views._window_bounds(start, start ~ ' + ' ~ spec.size_us) }}
  from {{ read.relation }}
  where {{ ts }} is not null
)
{%- endset -%}
{{ window_views._owned_windows(windowed, read) }}
{%- endmacro %}
