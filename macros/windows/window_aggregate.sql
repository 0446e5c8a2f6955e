{#- Window aggregate: group_by columns, window_start, window_end, window_time and the measures,
    the same rows as the TVF + GROUP BY form. With the window_views adapter, HOP and CUMULATE are
    planned from panes (window slicing); other Spark adapters render the TVF form. -#}
{% macro window_aggregate(relation, window, measures, group_by=[]) -%}
  {{ return(adapter.dispatch('window_aggregate', 'window_views')(relation, window, measures, group_by)) }}
{%- endmacro %}

{% macro window_views__window_aggregate(relation, window, measures, group_by=[]) -%}
  {%- if not execute -%}
    {{ return(window_views._unchecked(relation)) }}
  {%- endif -%}
  {%- set rel = window_views._relation(relation, 'window_aggregate') -%}
  {#- the planner gets the validated spec (micros), never the interval strings -#}
  {%- set spec = window_views._window_aggregate_spec(window) -%}
  {%- set read = window_views._window_read(relation, rel, spec, 'window_aggregate') -%}
  {%- set plan = adapter.plan_window_aggregate(read.relation, spec, measures, group_by) -%}
  {%- if plan['sql'] is not none -%}
    {#- the marker records the window as a TVF's does, noting that panes compute it -#}
    {#- with the measures and keys, so a stream can keep per-pane partial aggregates -#}
    {%- set marked = {'via': 'window_aggregate', 'group_by': [group_by] if group_by is string else group_by,
        'measures': measures} -%}
    {%- do marked.update(spec) -%}
{%- set windowed -%}
(
  {{ window_views._tvf_marker(marked) }}
  select * from {{ plan['sql'] }} {{ window_views._rules().names.panes }}
)
{%- endset -%}
{{ window_views._owned_windows(windowed, read) }}
  {%- else -%}
    {{ window_views._window_aggregate_tvf(relation, window, measures, group_by) }}
  {%- endif -%}
{%- endmacro %}

{% macro default__window_aggregate(relation, window, measures, group_by=[]) -%}
  {%- if not execute -%}
    {{ return(window_views._unchecked(relation)) }}
  {%- endif -%}
  {{ window_views._window_aggregate_tvf(relation, window, measures, group_by) }}
{%- endmacro %}
