{#- Argument checks shared by the window macros, for the four TVF macros and window_aggregate
    alike. Errors name the macro, the argument, the value and the fix. Under the window_views
    adapter the checks are the plugin's Python (query/macro_arguments.py, through
    adapter.window_spec and adapter.window_column). As a plain dbt package under another
    Spark-family adapter, which has neither, the default__ macros check by the same rules read
    from _rules.sql (rules.py), held to the Python's answers and messages by
    tests/unit/test_rules.py. The window macros call these only when `execute` is true (see
    _unchecked). -#}

{#- At parse time (execute is false) the window macros render this instead of checking their
    arguments, so a bad call fails only its own model, when dbt compiles it, never `dbt parse` or
    `dbt ls`. The relation is still rendered: a ref()/source() keeps the model's lineage. -#}
{% macro _unchecked(relation) -%}
(select * from {{ relation }})
{%- endmacro %}


{#- A validated window: the marker payload (macros/_internal/tvf_marker.sql) and the spec
    window_aggregate's pane planner reads. Intervals in microseconds; `text` holds the interval
    arguments as written. Keys by kind: tumble size_us, offset_us; hop slide_us, size_us,
    offset_us; cumulate step_us, size_us, offset_us; session gap_us, partition_by. `prefix`
    names arguments inside a dict argument (window_aggregate's 'window.'). -#}
{% macro _window_spec(kind, time_col, size=none, slide=none, step=none, offset=none, gap=none, partition_by=none) -%}
  {%- set arguments = {'time_col': time_col, 'size': size, 'slide': slide, 'step': step, 'offset': offset, 'gap': gap, 'partition_by': partition_by} -%}
  {{ return(adapter.dispatch('_window_spec', 'window_views')(kind, arguments)) }}
{%- endmacro %}

{% macro window_views___window_spec(kind, arguments) -%}
  {{ return(adapter.window_spec(kind, arguments)) }}
{%- endmacro %}

{% macro default___window_spec(kind, arguments) -%}
  {{ return(window_views._checked_window_spec(kind, arguments.time_col, arguments.size, arguments.slide, arguments.step, arguments.offset, arguments.gap, arguments.partition_by)) }}
{%- endmacro %}

{#- the package form's checks (see above) -#}
{% macro _checked_window_spec(kind, time_col, size=none, slide=none, step=none, offset=none, gap=none, partition_by=none, macro_name=none, prefix='') -%}
  {%- set macro_name = macro_name or kind -%}
  {%- set where = 'window_views.' ~ macro_name ~ ": argument '" ~ prefix -%}
  {%- do window_views._column(time_col, macro_name, prefix ~ 'time_col') -%}
  {%- set spec = {'kind': kind, 'time_col': time_col} -%}
  {%- set text = {} -%}
  {%- if kind == 'session' -%}
    {%- set gap_us = window_views._interval_micros(gap, macro_name, prefix ~ 'gap') -%}
    {%- set keys = [] if partition_by is none else ([partition_by] if partition_by is string else partition_by) -%}
    {%- if keys is string or keys is mapping or keys is not iterable -%}
      {{ exceptions.raise_compiler_error(where ~ "partition_by' must be a column name or a list of column names, got " ~ (partition_by | string)) }}
    {%- endif -%}
    {%- for key in keys -%}
      {%- do window_views._column(key, macro_name, prefix ~ 'partition_by') -%}
    {%- endfor -%}
    {%- do spec.update({'gap_us': gap_us, 'partition_by': keys | list}) -%}
    {%- do text.update({'gap': window_views._interval_text(gap)}) -%}
  {%- else -%}
    {%- set unit_name = {'tumble': none, 'hop': 'slide', 'cumulate': 'step'}[kind] -%}
    {%- if unit_name is not none -%}
      {%- set unit = slide if kind == 'hop' else step -%}
      {%- set unit_us = window_views._interval_micros(unit, macro_name, prefix ~ unit_name) -%}
      {%- do spec.update({unit_name ~ '_us': unit_us}) -%}
      {%- do text.update({unit_name: window_views._interval_text(unit)}) -%}
    {%- endif -%}
    {%- set size_us = window_views._interval_micros(size, macro_name, prefix ~ 'size') -%}
    {%- do spec.update({'size_us': size_us}) -%}
    {%- do text.update({'size': window_views._interval_text(size)}) -%}
    {%- if kind == 'hop' and unit_us > size_us -%}
      {{ exceptions.raise_compiler_error(where ~ "slide' = '" ~ slide ~ "' is larger than '" ~ prefix ~ "size' = '" ~ size ~ "': the rows between two windows would be in no window; fix: use a slide of at most the size (slide = size is a tumbling window)") }}
    {%- elif kind == 'cumulate' and size_us % unit_us != 0 -%}
      {{ exceptions.raise_compiler_error(where ~ "size' = '" ~ size ~ "' must be a multiple of '" ~ prefix ~ "step' = '" ~ step ~ "'; fix: make size a whole number of steps") }}
    {%- endif -%}
    {%- if offset is none -%}
      {%- do spec.update({'offset_us': 0}) -%}
    {%- else -%}
      {%- do spec.update({'offset_us': window_views._interval_micros(offset, macro_name, prefix ~ 'offset', allow_negative=true)}) -%}
      {%- do text.update({'offset': window_views._interval_text(offset)}) -%}
    {%- endif -%}
  {%- endif -%}
  {%- do spec.update({'text': text}) -%}
  {{ return(spec) }}
{%- endmacro %}


{#- window_aggregate's `window` dict, checked and then validated as a window -#}
{% macro _window_aggregate_spec(window) -%}
  {{ return(adapter.dispatch('_window_aggregate_spec', 'window_views')(window)) }}
{%- endmacro %}

{% macro window_views___window_aggregate_spec(window) -%}
  {{ return(adapter.window_spec('window_aggregate', {'window': window})) }}
{%- endmacro %}

{% macro default___window_aggregate_spec(window) -%}
  {%- set keys = {
      'tumble': ['kind', 'time_col', 'size', 'offset'],
      'hop': ['kind', 'time_col', 'size', 'slide', 'offset'],
      'cumulate': ['kind', 'time_col', 'size', 'step', 'offset']} -%}
  {%- set where = "window_views.window_aggregate: argument 'window' " -%}
  {%- if window is not mapping -%}
    {{ exceptions.raise_compiler_error(where ~ "must be a dict such as {'kind': 'hop', 'time_col': 'ts', 'size': '1 hour', 'slide': '1 minute'}, got " ~ (window | string)) }}
  {%- endif -%}
  {%- set kind = window.get('kind') -%}
  {%- if kind is not string or kind not in keys -%}
    {{ exceptions.raise_compiler_error(where ~ "has kind " ~ (kind | string if kind is none else "'" ~ kind ~ "'") ~ "; expected one of: tumble, hop, cumulate") }}
  {%- endif -%}
  {%- set unknown = window.keys() | reject('in', keys[kind]) | sort -%}
  {%- if unknown -%}
    {{ exceptions.raise_compiler_error(where ~ "has unknown key(s) " ~ unknown | join(', ') ~ " for kind '" ~ kind ~ "'; expected: " ~ keys[kind] | join(', ')) }}
  {%- endif -%}
  {%- set missing = keys[kind] | reject('in', window) | reject('equalto', 'offset') | list -%}
  {%- if missing -%}
    {{ exceptions.raise_compiler_error(where ~ "is missing " ~ missing | join(', ') ~ " for kind '" ~ kind ~ "'; expected keys: " ~ keys[kind] | join(', ') ~ " (offset optional)") }}
  {%- endif -%}
  {{ return(window_views._checked_window_spec(kind, window['time_col'], size=window['size'], slide=window.get('slide'),
      step=window.get('step'), offset=window.get('offset'), macro_name='window_aggregate', prefix='window.')) }}
{%- endmacro %}


{#- the interval rules are the plugin's Python ones (intervals.py), read from _rules.sql -#}
{% macro _interval_micros(value, macro_name, argument, allow_negative=false) -%}
  {%- set rules = window_views._rules() -%}
  {%- set where = "window_views." ~ macro_name ~ ": argument '" ~ argument ~ "'" -%}
  {%- if value is not string -%}
    {{ exceptions.raise_compiler_error(where ~ " must be an interval string such as '10 minutes', got " ~ (value | string)) }}
  {%- endif -%}
  {%- set m = modules.re.match(rules.interval_pattern, value) -%}
  {%- if not m -%}
    {{ exceptions.raise_compiler_error(where ~ " = '" ~ value ~ "' is not an interval: expected " ~ rules.interval_allowed ~ window_views._did_you_mean(value)) }}
  {%- endif -%}
  {%- set micros = (m.group(2) | int) * rules.interval_units[m.group(3) | lower] * (-1 if m.group(1) == '-' else 1) -%}
  {%- if micros == 0 and not allow_negative -%}
    {{ exceptions.raise_compiler_error(where ~ " = '" ~ value ~ "' is zero: it must be a positive interval") }}
  {%- elif micros < 0 and not allow_negative -%}
    {{ exceptions.raise_compiler_error(where ~ " = '" ~ value ~ "' is negative: it must be a positive interval") }}
  {%- elif micros | abs > rules.interval_max_micros -%}
    {{ exceptions.raise_compiler_error(where ~ " = '" ~ value ~ "' is too long: at most " ~ rules.interval_max_days ~ " days (about 100 years), so that window bounds stay within Spark's timestamps; fix: use a shorter interval") }}
  {%- endif -%}
  {{ return(micros) }}
{%- endmacro %}


{#- an interval as the marker and the table properties show it: its words, single-spaced -#}
{% macro _interval_text(value) -%}
  {{ return(value.split() | join(' ')) }}
{%- endmacro %}


{#- "; did you mean '5 minutes'?" for a misspelt unit, else '': a unit whose letters the word's
    (less a plural s) spell in order from its first ('minuts', '3 hrs', '1 dys', '10mins'), or
    that the word holds in order ('minnutes'); never for another unit ('1 month', '5 ms') -#}
{% macro _did_you_mean(value) -%}
  {%- set m = modules.re.match('^ *([+-]?) *([0-9]{1,12}) *([A-Za-z]+) *$', value) -%}
  {%- if m -%}
    {%- set word = m.group(3) | lower -%}
    {%- set word = word[:-1] if word[-1] == 's' else word -%}
    {%- for unit in window_views._rules().interval_units -%}
      {%- if word | length >= 2 and (modules.re.match('^' ~ word | list | join('.*'), unit) or modules.re.match('^' ~ unit | list | join('.*'), word)) -%}
        {{ return("; did you mean '" ~ m.group(1) ~ m.group(2) ~ ' ' ~ unit ~ ('' if (m.group(2) | int) == 1 else 's') ~ "'?") }}
      {%- endif -%}
    {%- endfor -%}
  {%- endif -%}
  {{ return('') }}
{%- endmacro %}


{#- a column a window argument names, quoted: the plugin's rule (names.py) -#}
{% macro _column(name, macro_name, argument) -%}
  {{ return(adapter.dispatch('_column', 'window_views')(name, macro_name, argument)) }}
{%- endmacro %}

{% macro window_views___column(name, macro_name, argument) -%}
  {{ return(adapter.window_column(name, macro_name, argument)) }}
{%- endmacro %}

{% macro default___column(name, macro_name, argument) -%}
  {%- set rules = window_views._rules() -%}
  {%- set where = "window_views." ~ macro_name ~ ": argument '" ~ argument ~ "' " -%}
  {%- if name is not string or not modules.re.match(rules.name_pattern, name) -%}
    {{ exceptions.raise_compiler_error(where ~ rules.name_rule ~ ", got " ~ (name | string)) }}
  {%- elif (name | lower).startswith(rules.reserved_prefix) -%}
    {{ exceptions.raise_compiler_error(where ~ "= '" ~ name ~ "' uses the prefix " ~ rules.reserved_prefix ~ ", which the plugin reserves for its own columns; fix: rename the column") }}
  {%- endif -%}
  {{ return(adapter.quote(name)) }}
{%- endmacro %}


{% macro _relation(relation, macro_name) -%}
  {#- a ref()/source() relation renders itself (lineage comes from the ref call);
      a string must be a CTE name -#}
  {%- if relation is string -%}
    {%- if not modules.re.match(window_views._rules().name_pattern, relation) -%}
      {{ exceptions.raise_compiler_error("window_views." ~ macro_name ~ ": argument 'relation' must be ref(...), source(...) or a CTE name, got '" ~ relation ~ "'") }}
    {%- endif -%}
    {{ return(adapter.quote(relation)) }}
  {%- elif relation is none or relation.identifier is not defined -%}
    {{ exceptions.raise_compiler_error("window_views." ~ macro_name ~ ": argument 'relation' must be ref(...), source(...) or a CTE name, got " ~ (relation | string)) }}
  {%- endif -%}
  {{ return(relation | string) }}
{%- endmacro %}
