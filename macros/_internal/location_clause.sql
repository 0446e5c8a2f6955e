{#- A window view is built beside the table it replaces, so with location_root each build gets
    its own directory (the old one is removed after the swap); other models keep dbt-spark's. -#}
{% macro window_views__location_clause() -%}
  {%- set location_root = config.get('location_root', validator=validation.any[basestring]) -%}
  {%- if location_root is not none and config.get('materialized') == 'window_view' %}
    location '{{ location_root }}/{{ model['alias'] }}/run={{ invocation_id }}'
  {%- else -%}
    {{ spark__location_clause() }}
  {%- endif %}
{%- endmacro %}
