{#- Argument checks shared by the window macros. They run at compile time and raise
    errors that name the macro and the argument. Pure Jinja (modules.re), so the
    package form works under any Spark-family adapter. -#}

{% macro _interval_micros(value, macro_name, argument, allow_negative=false) -%}
  {%- set units = {'second': 1000000, 'minute': 60000000, 'hour': 3600000000, 'day': 86400000000} -%}
  {%- set allowed = "'<n> <unit>' with unit second(s), minute(s), hour(s) or day(s), e.g. '10 minutes'" -%}
  {%- if value is not string -%}
    {{ exceptions.raise_compiler_error("window_views." ~ macro_name ~ ": argument '" ~ argument ~ "' must be an interval string such as '10 minutes', got " ~ (value | string)) }}
  {%- endif -%}
  {%- set m = modules.re.match('^ *([+-]?) *([0-9]{1,12}) +(second|minute|hour|day)s? *$', value, modules.re.IGNORECASE) -%}
  {%- if not m -%}
    {{ exceptions.raise_compiler_error("window_views." ~ macro_name ~ ": argument '" ~ argument ~ "' = '" ~ value ~ "' is not an interval: expected " ~ allowed) }}
  {%- endif -%}
  {%- set micros = (m.group(2) | int) * units[m.group(3) | lower] * (-1 if m.group(1) == '-' else 1) -%}
  {%- if micros == 0 and not allow_negative -%}
    {{ exceptions.raise_compiler_error("window_views." ~ macro_name ~ ": argument '" ~ argument ~ "' = '" ~ value ~ "' is zero: it must be a positive interval") }}
  {%- elif micros < 0 and not allow_negative -%}
    {{ exceptions.raise_compiler_error("window_views." ~ macro_name ~ ": argument '" ~ argument ~ "' = '" ~ value ~ "' is negative: it must be a positive interval") }}
  {%- endif -%}
  {{ return(micros) }}
{%- endmacro %}


{% macro _column(name, macro_name, argument) -%}
  {%- if name is not string or not modules.re.match('^[A-Za-z_][A-Za-z0-9_]*$', name) -%}
    {{ exceptions.raise_compiler_error("window_views." ~ macro_name ~ ": argument '" ~ argument ~ "' must be a column name (letters, digits, underscores), got " ~ (name | string)) }}
  {%- endif -%}
  {{ return(adapter.quote(name)) }}
{%- endmacro %}


{% macro _relation(relation, macro_name) -%}
  {#- a ref()/source() relation renders itself (lineage comes from the ref call);
      a string must be a CTE name -#}
  {%- if relation is string -%}
    {%- if not modules.re.match('^[A-Za-z_][A-Za-z0-9_]*$', relation) -%}
      {{ exceptions.raise_compiler_error("window_views." ~ macro_name ~ ": argument 'relation' must be ref(...), source(...) or a CTE name, got '" ~ relation ~ "'") }}
    {%- endif -%}
    {{ return(adapter.quote(relation)) }}
  {%- elif relation is none or relation.identifier is not defined -%}
    {{ exceptions.raise_compiler_error("window_views." ~ macro_name ~ ": argument 'relation' must be ref(...), source(...) or a CTE name, got " ~ (relation | string)) }}
  {%- endif -%}
  {{ return(relation | string) }}
{%- endmacro %}


{% macro _micros(time_sql) -%}
  unix_micros(cast({{ time_sql }} as timestamp))
{%- endmacro %}


{% macro _window_bounds(start_sql, end_sql) -%}
  timestamp_micros({{ start_sql }}) as window_start,
  timestamp_micros({{ end_sql }}) as window_end,
  timestamp_micros({{ end_sql }} - 1) as window_time
{%- endmacro %}
