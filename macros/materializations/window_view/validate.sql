{#- Every check of the window_view materialization, in one place: the model's plan (plan.py)
    parses its config and runs each check that needs no Spark, the same code `dbt compile` runs.
    Returns the plan the runners take. -#}
{% macro _validate_window_view() -%}
  {{ return(adapter.window_view_plan(model['name'], compiled_code, model['config'], window_views._upstream_nodes())) }}
{%- endmacro %}
