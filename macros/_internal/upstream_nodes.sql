{#- The model's direct inputs, with their configs: the plan decides which a stream may read
    (append-only) and which it must refuse (rewritten in place). -#}
{% macro _upstream_nodes() -%}
  {%- set nodes = [] -%}
  {%- for node_id in model['depends_on']['nodes'] -%}
    {%- set node = graph['nodes'].get(node_id) or graph['sources'].get(node_id) -%}
    {%- if node is not none -%}
      {%- do nodes.append({'name': node['name'], 'resource_type': node['resource_type'], 'config': node['config']}) -%}
    {%- endif -%}
  {%- endfor -%}
  {{ return(nodes) }}
{%- endmacro %}
