{#- SESSION: per partition, a row at most `gap` after the previous row joins its session
    [first time, last time + gap): windows [t, t + gap) that touch or overlap merge, as in
    Flink and Spark's session_window. Every row carries its merged session's bounds. -#}
{% macro session(relation, time_col, gap, partition_by=none) -%}
  {{ return(adapter.dispatch('session', 'window_views')(relation, time_col, gap, partition_by)) }}
{%- endmacro %}

{% macro default__session(relation, time_col, gap, partition_by=none) -%}
  {%- set rel = window_views._relation(relation, 'session') -%}
  {%- set ts = window_views._column(time_col, 'session', 'time_col') -%}
  {%- set gap_us = window_views._interval_micros(gap, 'session', 'gap') -%}
  {%- set keys = [] if partition_by is none else ([partition_by] if partition_by is string else partition_by) -%}
  {%- if keys is string or keys is mapping or keys is not iterable -%}
    {{ exceptions.raise_compiler_error("window_views.session: argument 'partition_by' must be a column name or a list of column names, got " ~ (partition_by | string)) }}
  {%- endif -%}
  {%- set part = [] -%}
  {%- for key in keys -%}
    {%- do part.append('_wv_row.' ~ window_views._column(key, 'session', 'partition_by')) -%}
  {%- endfor -%}
  {%- set partition = ('partition by ' ~ part | join(', ')) if part else '' -%}
(
  {{ '/* window_views.session(time_col=' ~ time_col ~ ', gap=' ~ gap ~ (', partition_by=' ~ (keys | join(' ')) if keys else '') ~ ') */' }}
  select _wv_row.*,
    {{ window_views._window_bounds(
        'min(_wv_t) over (' ~ partition ~ (', ' if part else 'partition by ') ~ '_wv_session)',
        'max(_wv_t) over (' ~ partition ~ (', ' if part else 'partition by ') ~ '_wv_session) + ' ~ gap_us) }}
  from (
    -- ties share a session: the range frame counts all peers of a row
    select _wv_row, _wv_t,
      sum(_wv_new) over ({{ partition }} order by _wv_t range between unbounded preceding and current row) as _wv_session
    from (
      select _wv_row, _wv_t,
        case when _wv_t - lag(_wv_t) over ({{ partition }} order by _wv_t) <= {{ gap_us }} then 0 else 1 end as _wv_new
      from (
        select struct(*) as _wv_row, {{ window_views._micros(ts) }} as _wv_t
        from {{ rel }}
        where {{ ts }} is not null
      )
    )
  )
)
{%- endmacro %}
