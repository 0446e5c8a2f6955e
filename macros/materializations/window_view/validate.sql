{#- Every config check of the window_view materialization, in one place: unknown keys, values
    outside their allowed set, a missing watermark. Runs before any SQL. -#}
{% macro _validate_window_view() -%}
  {% do adapter.validate_window_view(model['name'], model['config']) %}
{%- endmacro %}
