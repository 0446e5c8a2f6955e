{#- execution='batch': build the table beside the current one, then swap it into place, so a
    failure leaves the old table untouched. -#}
{% macro _window_view_batch(plan) -%}
  {%- set target_relation = api.Relation.create(identifier=model['alias'], schema=schema, database=database, type='table') -%}
  {%- set existing_relation = adapter.get_relation(database=database, schema=schema, identifier=model['alias']) -%}

  {{ run_hooks(pre_hooks) }}

  {%- set built = adapter.batch_statement(plan) -%}
  {#- `<alias>__wv_tmp`, a killed run's table there dropped, or the table itself for a format
      that replaces it in one commit (Delta): swap.table_format -#}
  {%- set build = adapter.build_beside(plan, target_relation, existing_relation) -%}
  {%- call statement('main') -%}
    {{ window_views._create_window_view_table(build, built) }}
  {%- endcall -%}
  {#- the status dbt prints says how many rows a NULL time left out -#}
  {%- if built['nulls'] -%}
    {% do store_result('main', response=adapter.batch_response(load_result('main')['response'], built['nulls'])) %}
  {%- endif -%}
  {% do adapter.swap_into_place(plan, build, target_relation, existing_relation) %}

  {% do apply_grants(target_relation, config.get('grants'), should_revoke(existing_relation, full_refresh_mode=True)) %}
  {% do persist_docs(target_relation, model, for_relation=false) %}

  {{ run_hooks(post_hooks) }}

  {{ return({'relations': [target_relation]}) }}
{%- endmacro %}

{#- execution='batch' with batch_size: the plugin computes the batches the run owes and replaces
    each one's partition of the table (incremental.py); a failed batch leaves its rows as they were. -#}
{% macro _window_view_batches(plan) -%}
  {%- set target_relation = api.Relation.create(identifier=model['alias'], schema=schema, database=database, type='table') -%}
  {%- set existing_relation = adapter.get_relation(database=database, schema=schema, identifier=model['alias']) -%}

  {{ run_hooks(pre_hooks) }}

  {% do window_views._assert_contract(compiled_code) %}
  {%- set result = adapter.run_batches(plan, target_relation, should_full_refresh(), config.get('location_root')) -%}
  {% do store_result('main', response=result['response']) %}
  {% do window_views._describe_window_view(target_relation, result) %}

  {% do apply_grants(target_relation, config.get('grants'), should_revoke(existing_relation, full_refresh_mode=True)) %}
  {% do persist_docs(target_relation, model, for_relation=false) %}

  {{ run_hooks(post_hooks) }}

  {{ return({'relations': [target_relation]}) }}
{%- endmacro %}
