{#- Window metadata (kinds, sizes, emit mode, watermark) as table properties, and in the table
    comment that `dbt docs` shows next to the model's description; for a table that exists
    (streaming, per-batch builds). -#}
{% macro _describe_window_view(relation, plan) -%}
  {%- set properties = {'comment': window_views._window_view_comment(plan)} -%}
  {%- do properties.update(plan['properties']) -%}
  {%- call statement('describe_window_view') -%}
    alter table {{ relation }} set {{ window_views._tblproperties(properties) }}
  {%- endcall -%}
{%- endmacro %}

{#- The model's description, then the window summary. -#}
{% macro _window_view_comment(plan) -%}
  {{ return(((model['description'] ~ ' ') if model['description'] else '') ~ plan['summary']) }}
{%- endmacro %}

{#- `tblproperties (...)` of every key and value, each a string literal. -#}
{% macro _tblproperties(properties) -%}
  tblproperties (
    {%- for key, value in properties.items() %}
    {{ window_views._sql_string(key) }} = {{ window_views._sql_string(value) }}{{ "," if not loop.last }}
    {%- endfor %}
  )
{%- endmacro %}
