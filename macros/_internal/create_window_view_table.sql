{#- The table a batch build writes, created with its window metadata (table properties and the
    comment `dbt docs` shows) in the CREATE itself, not a following ALTER: one statement fewer per
    run. dbt-spark's clauses otherwise; with location_root each build writes its own directory
    (<location_root>/<alias>/run=<invocation_id>), removed after a later swap replaces it. -#}
{% macro _create_window_view_table(relation, described) -%}
  {%- set properties = {} -%}
  {%- do properties.update(config.get('tblproperties') or {}) -%}
  {%- do properties.update(described['properties']) -%}
  create table {{ relation }}
  {{ file_format_clause() }}
  {{ options_clause() }}
  {{ window_views._tblproperties(properties) }}
  {{ partition_cols(label="partitioned by") }}
  {{ clustered_cols(label="clustered by") }}
  {%- if config.get('location_root') is not none %}
  location {{ window_views._sql_string(config.get('location_root') ~ '/' ~ model['alias'] ~ '/run=' ~ invocation_id) }}
  {%- endif %}
  comment {{ window_views._sql_string(window_views._window_view_comment(described)) }}
  as
  {{ window_views._contracted_sql(described['sql']) }}
{%- endmacro %}
