{#- CUMULATE: windows start at multiples of `size` (shifted by `offset`) and end every
    `step` until `size`; a row belongs to every window of its period that ends after it. -#}
{% macro cumulate(relation, time_col, step, size, offset=none) -%}
  {{ return(adapter.dispatch('cumulate', 'window_views')(relation, time_col, step, size, offset)) }}
{%- endmacro %}

{% macro default__cumulate(relation, time_col, step, size, offset=none) -%}
  {%- set rel = window_views._relation(relation, 'cumulate') -%}
  {%- set ts = window_views._column(time_col, 'cumulate', 'time_col') -%}
  {%- set step_us = window_views._interval_micros(step, 'cumulate', 'step') -%}
  {%- set size_us = window_views._interval_micros(size, 'cumulate', 'size') -%}
  {%- set offset_us = window_views._interval_micros(offset, 'cumulate', 'offset', allow_negative=true) if offset is not none else 0 -%}
  {%- if size_us % step_us != 0 -%}
    {{ exceptions.raise_compiler_error("window_views.cumulate: argument 'size' = '" ~ size ~ "' must be a multiple of 'step' = '" ~ step ~ "'") }}
  {%- endif -%}
  {%- set t = window_views._micros(ts) -%}
  {%- set start = '(' ~ t ~ ' - pmod(' ~ t ~ ' - ' ~ offset_us ~ ', ' ~ size_us ~ '))' -%}
(
  {{ '/* window_views.cumulate(time_col=' ~ time_col ~ ', step=' ~ step ~ ', size=' ~ size ~ (', offset=' ~ offset if offset is not none else '') ~ ') */' }}
  select *
  from {{ rel }}
  lateral view inline(
    transform(
      filter(sequence(1, {{ size_us // step_us }}), _wv_j -> {{ start }} + _wv_j * {{ step_us }}L > {{ t }}),
      _wv_j -> named_struct(
        'window_start', timestamp_micros({{ start }}),
        'window_end', timestamp_micros({{ start }} + _wv_j * {{ step_us }}L),
        'window_time', timestamp_micros({{ start }} + _wv_j * {{ step_us }}L - 1)
      )
    )
  ) _wv_windows as window_start, window_end, window_time
  where {{ ts }} is not null
)
{%- endmacro %}
