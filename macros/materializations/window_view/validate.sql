{#- Every check of the window_view materialization, in one place: the model's plan (plan.py)
    parses its config and runs each check that needs no Spark, the same code `dbt compile` runs.
    Returns the plan the runners take, its Kafka sources in the catalog (docs/kafka.md). -#}
{% macro _validate_window_view() -%}
  {%- set plan = adapter.window_view_plan(model['name'], compiled_code, model['config'], window_views._upstream_nodes()) -%}
  {%- do adapter.declare_kafka_sources(window_views._kafka_sources()) -%}
  {{ return(plan) }}
{%- endmacro %}
