{#- SESSION: per partition, a row at most `gap` after the previous row joins its session
    [first time, last time + gap): windows [t, t + gap) that touch or overlap merge, as in
    Flink and Spark's session_window. Every row carries its merged session's bounds.
    `session_lookback` (or the model's config of that name): how far before a dbt time filter's
    range (microbatch, --sample) sessions are read back; see docs/batch.md. -#}
{% macro session(relation, time_col, gap, partition_by=none, session_lookback=none) -%}
  {{ return(adapter.dispatch('session', 'window_views')(relation, time_col, gap, partition_by, session_lookback)) }}
{%- endmacro %}

{% macro default__session(relation, time_col, gap, partition_by=none, session_lookback=none) -%}
  {%- if not execute -%}
    {{ return(window_views._unchecked(relation)) }}
  {%- endif -%}
  {%- set rel = window_views._relation(relation, 'session') -%}
  {%- set spec = window_views._window_spec('session', time_col, gap=gap, partition_by=partition_by) -%}
  {%- set read = window_views._window_read(relation, rel, spec, 'session', session_lookback or config.get('session_lookback')) -%}
  {%- set ts = adapter.quote(time_col) -%}
  {%- set part = [] -%}
  {%- for key in spec.partition_by -%}
    {%- do part.append('_wv_row.' ~ adapter.quote(key)) -%}
  {%- endfor -%}
  {%- set partition = ('partition by ' ~ part | join(', ')) if part else '' -%}
{%- set windowed -%}
(
  {{ window_views._tvf_marker(spec) }}
  select _wv_row.*,
    {{ window_views._window_bounds(
        'min(_wv_t) over (' ~ partition ~ (', ' if part else 'partition by ') ~ '_wv_session)',
        'max(_wv_t) over (' ~ partition ~ (', ' if part else 'partition by ') ~ '_wv_session) + ' ~ spec.gap_us) }}
  from (
    -- ties share a session: the range frame counts all peers of a row
    select _wv_row, _wv_t,
      sum(_wv_new) over ({{ partition }} order by _wv_t range between unbounded preceding and current row) as _wv_session
    from (
      select _wv_row, _wv_t,
        case when _wv_t - lag(_wv_t) over ({{ partition }} order by _wv_t) <= {{ spec.gap_us }} then 0 else 1 end as _wv_new
      from (
        select struct(*) as _wv_row, {{ window_views._micros(ts) }} as _wv_t
        from {{ read.relation }}
        where {{ ts }} is not null
      )
    )
  )
)
{%- endset -%}
{{ window_views._owned_windows(windowed, read) }}
{%- endmacro %}
