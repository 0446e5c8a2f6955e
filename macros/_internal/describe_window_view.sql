{#- Window metadata (kinds, sizes, emit mode, watermark) as table properties, and in the table
    comment that `dbt docs` shows next to the model's description. -#}
{% macro _describe_window_view(relation, plan) -%}
  {%- set comment = ((model['description'] ~ ' ') if model['description'] else '') ~ plan['summary'] -%}
  {%- set properties = {'comment': comment} -%}
  {%- do properties.update(plan['properties']) -%}
  {%- call statement('describe_window_view') -%}
    alter table {{ relation }} set tblproperties (
      {%- for key, value in properties.items() %}
      {{ window_views._sql_string(key) }} = {{ window_views._sql_string(value) }}{{ "," if not loop.last }}
      {%- endfor %}
    )
  {%- endcall -%}
{%- endmacro %}
