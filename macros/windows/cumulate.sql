{#- CUMULATE: windows start at multiples of `size` (shifted by `offset`) and end every
    `step` until `size`; a row belongs to every window of its period that ends after it. -#}
{% macro cumulate(relation, time_col, step, size, offset=none) -%}
  {{ return(adapter.dispatch('cumulate', 'window_views')(relation, time_col, step, size, offset)) }}
{%- endmacro %}

{% macro default__cumulate(relation, time_col, step, size, offset=none) -%}
  {%- if not execute -%}
    {{ return(window_views._unchecked(relation)) }}
  {%- endif -%}
  {%- set rel = window_views._relation(relation, 'cumulate') -%}
  {%- set spec = window_views._window_spec('cumulate', time_col, step=step, size=size, offset=offset) -%}
  {%- set read = window_views._window_read(relation, rel, spec, 'cumulate') -%}
  {%- set ts = adapter.quote(time_col) -%}
  {%- set t = window_views._micros(ts) -%}
  {%- set start = window_views._window_floor(t, spec.offset_us, spec.size_us) -%}
  {%- set step_us = spec.step_us -%}
  {%- set n = window_views._rules().names -%}
{%- set windowed -%}
(
  {{ window_views._tvf_marker(spec) }}
  select *
  from {{ read.relation }}
  lateral view inline(
    transform(
      filter(sequence(1, {{ spec.size_us // step_us }}), {{ n.step }} -> {{ start }} + {{ n.step }} * {{ step_us }}L > {{ t }}),
      {{ n.step }} -> named_struct(
        'window_start', timestamp_micros({{ start }}),
        'window_end', timestamp_micros({{ start }} + {{ n.step }} * {{ step_us }}L),
        'window_time', timestamp_micros({{ start }} + {{ n.step }} * {{ step_us }}L - 1)
      )
    )
  ) {{ n.windows }} as window_start, window_end, window_time
  where {{ ts }} is not null
)
{%- endset -%}
{{ window_views._owned_windows(windowed, read) }}
{%- endmacro %}
