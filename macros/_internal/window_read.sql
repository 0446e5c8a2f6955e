{#- The input a window macro reads, and the windows it keeps. A relation without a dbt event-time
    filter (no microbatch batch, --event-time-start/end or --sample) renders as it always did and
    every window is kept (`owned` none). Under one, the plugin (reach.py) widens the filter by the
    window's reach and `owned` keeps the windows whose window_time the filter's range holds: each
    window whole, owned by exactly one range. -#}
{% macro _window_read(relation, rel, spec, macro_name, session_lookback=none) -%}
  {%- if relation is string or relation.event_time_filter is not defined or relation.event_time_filter is none -%}
    {{ return({'relation': rel, 'owned': none}) }}
  {%- endif -%}
  {{ return(adapter.dispatch('_window_read', 'window_views')(relation, spec, macro_name, session_lookback)) }}
{%- endmacro %}

{% macro window_views___window_read(relation, spec, macro_name, session_lookback) -%}
  {{ return(adapter.window_read(relation, spec, macro_name, session_lookback)) }}
{%- endmacro %}

{#- other Spark adapters have no reach planner: a cut window must not pass silently -#}
{% macro default___window_read(relation, spec, macro_name, session_lookback) -%}
  {{ exceptions.raise_compiler_error("window_views." ~ macro_name ~ ": dbt filters the input " ~ relation.render() ~ " to a time range (a microbatch batch, --event-time-start/end or --sample), which would cut the windows at its start; windows that stay whole under it need the window_views adapter; fix: run the model with the window_views adapter, or remove event_time from the input's config") }}
{%- endmacro %}

{#- the windowed rows, less the windows another range owns -#}
{% macro _owned_windows(windowed, read) -%}
  {%- if read.owned is none -%}
    {{ return(windowed) }}
  {%- endif -%}
  {{ return('(select * from ' ~ windowed ~ ' ' ~ window_views._rules().names.owned ~ ' where ' ~ read.owned ~ ')') }}
{%- endmacro %}
