{#- A model contract (`contract: {enforced: true}` with each column's data_type): dbt's own check
    (get_assert_columns_equivalent) that the query returns exactly the declared columns and types,
    raising dbt's contract error; the materializations call it before they write anything. -#}
{% macro _assert_contract(sql) -%}
  {%- if config.get('contract').enforced -%}
    {%- do get_assert_columns_equivalent(sql) -%}
  {%- endif -%}
{%- endmacro %}

{#- The query a contracted table is built from, as dbt-spark's create_table_as builds it: checked,
    then its columns selected in the declared order. -#}
{% macro _contracted_sql(sql) -%}
  {%- if not config.get('contract').enforced -%}
    {{ return(sql) }}
  {%- endif -%}
  {%- do window_views._assert_contract(sql) -%}
  {{ return(get_select_subquery(sql)) }}
{%- endmacro %}
