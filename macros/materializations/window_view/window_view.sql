{#- The window_view materialization: validate (build the model's plan, whose checks raise with
    the model, the key and the fix), then run it as a batch table or a streaming query. -#}
{% materialization window_view, adapter='window_views' %}
  {%- set plan = window_views._validate_window_view() -%}
  {%- if plan.config.execution == 'streaming' -%}
    {{ return(window_views._window_view_streaming(plan)) }}
  {%- endif -%}
  {%- if plan.config.batches is not none -%}
    {{ return(window_views._window_view_batches(plan)) }}
  {%- endif -%}
  {{ return(window_views._window_view_batch(plan)) }}
{% endmaterialization %}
