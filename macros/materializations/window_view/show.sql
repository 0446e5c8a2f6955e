{#- `dbt show` of a window view previews what its table would hold: with emit='on_window_close'
    only the windows (rows) the watermark has closed, as the build writes them (the plugin's
    batch statement). dbt's show runs this macro by name, and the plugin's package is searched
    before dbt's own (`get_limit_sql` dispatches in dbt's namespace, which the plugin's package
    is not part of); any other node's preview is dbt's. -#}
{% macro get_show_sql(compiled_code, sql_header, limit) -%}
  {%- set shown = compiled_code -%}
  {%- if model is mapping and model.get('config', {}).get('materialized') == 'window_view' -%}
    {%- set shown = adapter.window_view_shown(model['name'], compiled_code, model['config'], window_views._upstream_nodes()) -%}
  {%- endif -%}
  {%- if sql_header is not none -%}
  {{ sql_header }}
  {%- endif %}
  {{ get_limit_subquery_sql(shown, limit) }}
{%- endmacro %}
