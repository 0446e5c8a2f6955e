{#- A window view with location_root is built beside the table it replaces, so each build
    writes its own directory (<location_root>/<alias>/run=<invocation_id>); the materialization
    removes the replaced build's directory after the swap. dbt-spark's clauses otherwise. -#}
{% macro _create_external_table_as(relation, sql) -%}
  create table {{ relation }}
  {{ file_format_clause() }}
  {{ options_clause() }}
  {{ tblproperties_clause() }}
  {{ partition_cols(label="partitioned by") }}
  {{ clustered_cols(label="clustered by") }}
  location {{ window_views._sql_string(config.get('location_root') ~ '/' ~ model['alias'] ~ '/run=' ~ invocation_id) }}
  {{ comment_clause() }}
  as
  {{ sql }}
{%- endmacro %}
