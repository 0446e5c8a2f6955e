{#- The model's sources that declare a Kafka topic (meta: {window_views: {kafka: ...}}, docs/kafka.md),
    each with what the plugin needs to put it in the catalog: its relation and declared columns. -#}
{% macro _kafka_sources() -%}
  {%- set found = [] -%}
  {%- for node_id in model['depends_on']['nodes'] -%}
    {%- set node = graph['sources'].get(node_id) -%}
    {%- if node is not none -%}
      {%- set meta = (node.get('config') or {}).get('meta') or node.get('meta') or {} -%}
      {%- if (meta.get('window_views') or {}).get('kafka') is not none -%}
        {%- do found.append({'name': node['name'], 'source_name': node['source_name'], 'relation': node['relation_name'],
                             'meta': meta, 'columns': node['columns']}) -%}
      {%- endif -%}
    {%- endif -%}
  {%- endfor -%}
  {{ return(found) }}
{%- endmacro %}
