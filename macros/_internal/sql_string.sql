{#- A Spark SQL string literal of any text: backslashes and quotes escaped, so a value (a path,
    a description) can never end the literal. -#}
{% macro _sql_string(value) -%}
  '{{ value | string | replace("\\", "\\\\") | replace("'", "\\'") }}'
{%- endmacro %}
