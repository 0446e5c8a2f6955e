{#- HOP: windows of `size` starting every `slide` (slide <= size); a row belongs to every window
    whose [start, start + size) holds its time (ceil(size/slide) of them, fewer when size is not
    a multiple of slide). -#}
{% macro hop(relation, time_col, slide, size, offset=none) -%}
  {{ return(adapter.dispatch('hop', 'window_views')(relation, time_col, slide, size, offset)) }}
{%- endmacro %}

{% macro default__hop(relation, time_col, slide, size, offset=none) -%}
  {%- if not execute -%}
    {{ return(window_views._unchecked(relation)) }}
  {%- endif -%}
  {%- set rel = window_views._relation(relation, 'hop') -%}
  {%- set spec = window_views._window_spec('hop', time_col, slide=slide, size=size, offset=offset) -%}
  {%- set read = window_views._window_read(relation, rel, spec, 'hop') -%}
  {%- set ts = adapter.quote(time_col) -%}
  {%- set t = window_views._micros(ts) -%}
  {#- the latest window start at or before the row, then the candidates before it -#}
  {%- set last_start = window_views._window_floor(t, spec.offset_us, spec.slide_us) -%}
  {%- set candidates = ((spec.size_us + spec.slide_us - 1) // spec.slide_us) - 1 -%}
  {%- set n = window_views._rules().names -%}
{%- set windowed -%}
(
  {{ window_views._tvf_marker(spec) }}
  select *
  from {{ read.relation }}
  lateral view inline(
    transform(
      filter(
        sequence({{ last_start }} - {{ candidates * spec.slide_us }}, {{ last_start }}, {{ spec.slide_us }}),
        {{ n.window_start }} -> {{ n.window_start }} + {{ spec.size_us }} > {{ t }}
      ),
      {{ n.window_start }} -> named_struct(
        'window_start', timestamp_micros({{ n.window_start }}),
        'window_end', timestamp_micros({{ n.window_start }} + {{ spec.size_us }}),
        'window_time', timestamp_micros({{ n.window_start }} + {{ spec.size_us }} - 1)
      )
    )
  ) {{ n.windows }} as window_start, window_end, window_time
  where {{ ts }} is not null
)
{%- endset -%}
{{ window_views._owned_windows(windowed, read) }}
{%- endmacro %}
