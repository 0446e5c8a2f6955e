{#- The table a batch build writes, created with its window metadata (table properties and the
    comment `dbt docs` shows) in the CREATE itself, not a following ALTER: one statement fewer per
    run. dbt-spark's clauses otherwise; `build` (storage/table_format.Build) says the name, whether
    the CREATE replaces the table itself (Delta) and the folder under location_root: a build's own
    (<location_root>/<alias>/run=<invocation_id>, removed after a later swap replaces it), or a
    Delta table's one folder. -#}
{% macro _create_window_view_table(build, described) -%}
  {%- set properties = {} -%}
  {%- do properties.update(config.get('tblproperties') or {}) -%}
  {%- do properties.update(described['properties']) -%}
  create {% if build.replace %}or replace {% endif %}table {{ build.relation }}
  {{ file_format_clause() }}
  {{ options_clause() }}
  {{ window_views._tblproperties(properties) }}
  {{ partition_cols(label="partitioned by") }}
  {{ clustered_cols(label="clustered by") }}
  {%- if build.location is not none %}
  location {{ window_views._sql_string(build.location) }}
  {%- endif %}
  comment {{ window_views._sql_string(window_views._window_view_comment(described)) }}
  as
  {{ window_views._contracted_sql(described['sql']) }}
{%- endmacro %}
