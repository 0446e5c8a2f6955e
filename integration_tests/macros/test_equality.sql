{#-
  equality: the model and `compare_model` hold the same rows, as multisets, on `compare_columns`
  (default: every column of `compare_model`, i.e. of the expected seed).

  Written here in the spirit of dbt_utils.equality (the dbt hub is not reachable). It checks both
  directions with EXCEPT ALL, so a row the model has too often, too rarely, or not at all, and a
  row the model lacks, all count; NULLs compare equal, as in every SQL set operation. The test
  returns one row per difference (with `_diff` telling which side has the surplus), so it FAILS
  whenever the two differ and `--store-failures` keeps what differed. The first row also carries
  both row counts, to make a failure quick to read.

      data_tests:
        - equality:
            arguments:
              compare_model: ref('data_tumble_rows_expected')
              compare_columns: [bidtime, item]   # optional
-#}
{% test equality(model, compare_model, compare_columns=none) %}
  {{ return(adapter.dispatch('test_equality')(model, compare_model, compare_columns)) }}
{% endtest %}

{% macro default__test_equality(model, compare_model, compare_columns=none) %}
  {%- if not execute -%}
    {{ return('select 1 as _diff where false') }}
  {%- endif -%}

  {%- if compare_columns is none -%}
    {%- set compare_columns = adapter.get_columns_in_relation(compare_model) | map(attribute='name') | list -%}
  {%- elif compare_columns is string -%}
    {%- set compare_columns = [compare_columns] -%}
  {%- endif -%}
  {%- set columns = [] -%}
  {%- for column in compare_columns -%}
    {%- do columns.append(adapter.quote(column)) -%}
  {%- endfor -%}
  {#- no columns: the expected relation is not built yet (dbt compile / show before dbt seed);
      `*` keeps the SQL valid and makes a run without it fail with "table not found" -#}
  {%- set column_list = columns | join(', ') if columns else '*' -%}

with actual as (
  select {{ column_list }} from {{ model }}
),

expected as (
  select {{ column_list }} from {{ compare_model }}
),

in_model_not_expected as (
  select * from actual
  except all
  select * from expected
),

in_expected_not_model as (
  select * from expected
  except all
  select * from actual
),

counts as (
  select
    (select count(*) from actual) as _model_rows,
    (select count(*) from expected) as _expected_rows
),

differences as (
  select 'in model, not in expected' as _diff, * from in_model_not_expected
  union all
  select 'in expected, not in model' as _diff, * from in_expected_not_model
)

select differences.*, counts._model_rows, counts._expected_rows
from differences cross join counts
{% endmacro %}
