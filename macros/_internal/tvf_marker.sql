{#- The one channel from the window TVF macros to the plugin's Python: a versioned SQL comment
    holding the validated window spec (_window_spec) as JSON, read back by tvf.find in
    dbt/adapters/window_views/query/tvf.py (its docstring documents the format):
      /* window_views:tvf:v1 {"kind": "hop", "time_col": "ts", "slide_us": 300000000, ...} */
    `*/` cannot occur inside: column names are validated identifiers, intervals match
    '<n> <unit>', and window_aggregate's measure texts have `*/` written `*\/` (a JSON escape).
    A change of its keys or meaning is a new version. -#}
{% macro _tvf_marker(spec) -%}
/* window_views:tvf:v1 {{ tojson(spec) | replace('*/', '*\\/') }} */
{%- endmacro %}
