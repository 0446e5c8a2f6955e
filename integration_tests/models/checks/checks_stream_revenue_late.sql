{{ config(materialized='view') }}
-- The late table of test_checks_stream_revenue, which its materialization makes beside it, as a
-- dbt node: `dbt build` runs this view, and the data tests on it, after the stream has run.
{%- set stream = ref('test_checks_stream_revenue') %}
select * from {{ stream.incorporate(path={'identifier': stream.identifier ~ '__late'}) }}
