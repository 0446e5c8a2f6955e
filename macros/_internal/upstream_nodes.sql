{#- The model's direct inputs with what decides whether a stream may read them (append-only or
    rewritten in place). -#}
{% macro _upstream_nodes() -%}
  {%- set nodes = [] -%}
  {%- for node_id in model['depends_on']['nodes'] -%}
    {%- set node = graph['nodes'].get(node_id) or graph['sources'].get(node_id) -%}
    {%- if node is not none -%}
      {%- set cfg = node['config'] -%}
      {%- do nodes.append({
            'name': node['name'],
            'resource_type': node['resource_type'],
            'materialized': cfg.get('materialized'),
            'incremental_strategy': cfg.get('incremental_strategy'),
            'execution': cfg.get('execution'),
            'emit': cfg.get('emit'),
          }) -%}
    {%- endif -%}
  {%- endfor -%}
  {{ return(nodes) }}
{%- endmacro %}
