{#- The row-expanding form of a window aggregate: the window TVF, then GROUP BY. -#}
{% macro _window_aggregate_tvf(relation, window, measures, group_by) -%}
  {%- set spec = window_views._window_aggregate_spec(window) -%}
  {%- if measures is not mapping or not measures -%}
    {{ exceptions.raise_compiler_error("window_views.window_aggregate: argument 'measures' must be a non-empty dict of output name -> aggregate, got " ~ (measures | string)) }}
  {%- endif -%}
  {%- set keys = [group_by] if group_by is string else group_by -%}
  {%- set quoted = [] -%}
  {%- for key in keys -%}
    {%- do quoted.append(window_views._column(key, 'window_aggregate', 'group_by')) -%}
  {%- endfor -%}
  {%- if spec.kind == 'tumble' -%}
    {%- set windowed = window_views.tumble(relation, window['time_col'], window['size'], window.get('offset')) -%}
  {%- elif spec.kind == 'hop' -%}
    {%- set windowed = window_views.hop(relation, window['time_col'], window['slide'], window['size'], window.get('offset')) -%}
  {%- else -%}
    {%- set windowed = window_views.cumulate(relation, window['time_col'], window['step'], window['size'], window.get('offset')) -%}
  {%- endif -%}
(
  select
    {%- for key in quoted %} {{ key }},{% endfor %}
    window_start, window_end, window_time
    {%- for alias, expression in measures.items() %},
    {{ expression }} as {{ window_views._column(alias, 'window_aggregate', 'measures') }}
    {%- endfor %}
  from {{ windowed }}
  group by {% for key in quoted %}{{ key }}, {% endfor %}window_start, window_end, window_time
)
{%- endmacro %}
