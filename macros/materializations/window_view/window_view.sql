{% materialization window_view, adapter='window_views' %}
  {%- do window_views._validate_window_view() -%}

  {%- set identifier = model['alias'] -%}
  {%- set target_relation = api.Relation.create(identifier=identifier, schema=schema, database=database, type='table') -%}
  {%- set existing_relation = adapter.get_relation(database=database, schema=schema, identifier=identifier) -%}
  {%- set intermediate_relation = target_relation.incorporate(path={'identifier': identifier ~ '__wv_tmp'}) -%}
  {%- set backup_relation = target_relation.incorporate(path={'identifier': identifier ~ '__wv_backup'}) -%}
  {%- set grant_config = config.get('grants') -%}

  {{ run_hooks(pre_hooks) }}

  {%- if config.get('execution') == 'streaming' -%}
    {%- set result = adapter.run_streaming_window_view(
          model['name'], compiled_code, model['config'], target_relation,
          window_views._upstream_nodes(), should_full_refresh(), invocation_id) -%}
    {% do store_result('main', response=result['response']) %}
    {% do window_views._describe_window_view(target_relation, result['plan']) %}
    {%- set relations = [target_relation] -%}
    {%- if result['late_relation'] is not none -%}
      {%- do relations.append(result['late_relation']) -%}
    {%- endif -%}
    {% do apply_grants(target_relation, grant_config, should_revoke(existing_relation, full_refresh_mode=True)) %}
    {% do persist_docs(target_relation, model, for_relation=false) %}
    {{ run_hooks(post_hooks) }}
    {{ return({'relations': relations}) }}
  {%- endif -%}

  {#- build beside the current table: a failure here leaves it untouched -#}
  {%- set plan = adapter.plan_window_view(model['name'], compiled_code, model['config']) -%}
  {% do adapter.drop_relation(intermediate_relation) %}
  {%- call statement('main') -%}
    {%- if config.get('location_root') is not none -%}
      {{ window_views._create_external_table_as(intermediate_relation, plan['sql']) }}
    {%- else -%}
      {{ create_table_as(False, intermediate_relation, plan['sql']) }}
    {%- endif -%}
  {%- endcall -%}
  {% do window_views._describe_window_view(intermediate_relation, plan) %}

  {#- swap into place -#}
  {%- set old_location = none -%}
  {% if existing_relation is not none %}
    {%- if existing_relation.type == 'table' and config.get('location_root') is not none -%}
      {%- set old_location = adapter.table_location(existing_relation) -%}
    {%- endif -%}
    {% do adapter.drop_relation(backup_relation.incorporate(type=existing_relation.type)) %}
    {% do adapter.rename_relation(existing_relation, backup_relation.incorporate(type=existing_relation.type)) %}
  {% endif %}
  {% do adapter.rename_relation(intermediate_relation, target_relation) %}
  {% if existing_relation is not none %}
    {% do adapter.drop_relation(backup_relation.incorporate(type=existing_relation.type)) %}
    {% do adapter.remove_location(old_location) %}
  {% endif %}

  {% set should_revoke = should_revoke(existing_relation, full_refresh_mode=True) %}
  {% do apply_grants(target_relation, grant_config, should_revoke) %}
  {% do persist_docs(target_relation, model, for_relation=false) %}

  {{ run_hooks(post_hooks) }}

  {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}
