{#- HOP: windows of `size` starting every `slide`; a row belongs to every window whose
    [start, start + size) holds its time (ceil(size/slide) of them, fewer when size is not a
    multiple of slide, none when it falls in a gap of size < slide). -#}
{% macro hop(relation, time_col, slide, size, offset=none) -%}
  {{ return(adapter.dispatch('hop', 'window_views')(relation, time_col, slide, size, offset)) }}
{%- endmacro %}

{% macro default__hop(relation, time_col, slide, size, offset=none) -%}
  {%- set rel = window_views._relation(relation, 'hop') -%}
  {%- set ts = window_views._column(time_col, 'hop', 'time_col') -%}
  {%- set slide_us = window_views._interval_micros(slide, 'hop', 'slide') -%}
  {%- set size_us = window_views._interval_micros(size, 'hop', 'size') -%}
  {%- set offset_us = window_views._interval_micros(offset, 'hop', 'offset', allow_negative=true) if offset is not none else 0 -%}
  {%- set t = window_views._micros(ts) -%}
  {#- the latest window start at or before the row, then the candidates before it -#}
  {%- set last_start = '(' ~ t ~ ' - pmod(' ~ t ~ ' - ' ~ offset_us ~ ', ' ~ slide_us ~ '))' -%}
  {%- set candidates = ((size_us + slide_us - 1) // slide_us) - 1 -%}
(
  {{ '/* window_views.hop(time_col=' ~ time_col ~ ', slide=' ~ slide ~ ', size=' ~ size ~ (', offset=' ~ offset if offset is not none else '') ~ ') */' }}
  select *
  from {{ rel }}
  lateral view inline(
    transform(
      filter(
        sequence({{ last_start }} - {{ candidates * slide_us }}, {{ last_start }}, {{ slide_us }}),
        _wv_s -> _wv_s + {{ size_us }} > {{ t }}
      ),
      _wv_s -> named_struct(
        'window_start', timestamp_micros(_wv_s),
        'window_end', timestamp_micros(_wv_s + {{ size_us }}),
        'window_time', timestamp_micros(_wv_s + {{ size_us }} - 1)
      )
    )
  ) _wv_windows as window_start, window_end, window_time
  where {{ ts }} is not null
)
{%- endmacro %}
