{#- The landing table of one Nexmark event kind: an external parquet table over the generator's
    folder <landing>/<kind>, with the generator's columns (bench/nexmark/README.md). The folder is
    var('landing'), else the environment variable NEXMARK_LANDING, else /tmp/nexmark; an existing
    table keeps the folder it was made with. -#}
{% macro nexmark_landing_table(kind) %}
  {%- set columns = {
      'person': 'id bigint, name string, emailAddress string, creditCard string, city string, state string, '
                ~ 'dateTime timestamp, extra string',
      'auction': 'id bigint, itemName string, description string, initialBid bigint, reserve bigint, '
                 ~ 'dateTime timestamp, expires timestamp, seller bigint, category bigint, extra string',
      'bid': 'auction bigint, bidder bigint, price bigint, channel string, url string, dateTime timestamp, '
             ~ 'extra string',
  } -%}
  {%- set landing = var('landing', env_var('NEXMARK_LANDING', '/tmp/nexmark')) -%}
  create table if not exists {{ target.schema }}.{{ kind }} ({{ columns[kind] }})
  using parquet location '{{ landing.rstrip('/') }}/{{ kind }}'
{% endmacro %}
