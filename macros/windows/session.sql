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
  {%- set n = window_views._rules().names -%}
  {%- set part = [] -%}
  {%- for key in spec.partition_by -%}
    {%- do part.append(n.row ~ '.' ~ adapter.quote(key)) -%}
  {%- endfor -%}
  {%- set partition = ('partition by ' ~ part | join(', ')) if part else '' -%}
{%- set windowed -%}
(
  {{ window_views._tvf_marker(spec) }}
  select {{ n.row }}.*,
    {{ window_views._window_bounds(
        'min(' ~ n.time ~ ') over (' ~ partition ~ (', ' if part else 'partition by ') ~ n.session ~ ')',
        'max(' ~ n.time ~ ') over (' ~ partition ~ (', ' if part else 'partition by ') ~ n.session ~ ') + ' ~ spec.gap_us) }}
  from (
    -- ties share a session: the range frame counts all peers of a row
    select {{ n.row }}, {{ n.time }},
      sum({{ n.new_session }}) over ({{ partition }} order by {{ n.time }} range between unbounded preceding and current row) as {{ n.session }}
    from (
      select {{ n.row }}, {{ n.time }},
        case when {{ n.time }} - lag({{ n.time }}) over ({{ partition }} order by {{ n.time }}) <= {{ spec.gap_us }} then 0 else 1 end as {{ n.new_session }}
      from (
        select struct(*) as {{ n.row }}, {{ window_views._micros(ts) }} as {{ n.time }}
        from {{ read.relation }}
        where {{ ts }} is not null
      )
    )
  )
)
{%- endset -%}
{{ window_views._owned_windows(windowed, read) }}
{%- endmacro %}
