{#- execution='streaming': one adapter call runs the Structured Streaming query (streaming/),
    with the materialization's shape around it. -#}
{% macro _window_view_streaming(plan) -%}
  {%- set target_relation = api.Relation.create(identifier=model['alias'], schema=schema, database=database, type='table') -%}
  {%- set existing_relation = adapter.get_relation(database=database, schema=schema, identifier=model['alias']) -%}

  {{ run_hooks(pre_hooks) }}

  {#- before the stream touches the table, late table or checkpoint, as a batch build checks it
      before it writes: the columns the model names, then its contract (the model's SQL has the
      stream's output columns) -#}
  {% do adapter.check_stream_columns(plan) %}
  {% do window_views._assert_contract(compiled_code) %}
  {%- set result = adapter.run_stream(plan, target_relation, should_full_refresh(), invocation_id, flags.EMPTY) -%}
  {% do store_result('main', response=result['response']) %}
  {%- if result['plan'] is not none -%}
    {% do window_views._describe_window_view(target_relation, result['plan']) %}
  {%- endif -%}
  {%- set relations = [target_relation] -%}
  {%- if result['late_relation'] is not none -%}
    {%- do relations.append(result['late_relation']) -%}
  {%- endif -%}

  {% do apply_grants(target_relation, config.get('grants'), should_revoke(existing_relation, full_refresh_mode=True)) %}
  {% do persist_docs(target_relation, model, for_relation=false) %}

  {{ run_hooks(post_hooks) }}

  {{ return({'relations': relations}) }}
{%- endmacro %}
