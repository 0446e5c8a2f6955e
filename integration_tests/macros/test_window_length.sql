{#-
  window_length: every row's window is `size` long (window_end - window_start), e.g. a TUMBLE or
  HOP view's windows; returns the rows whose window is not.

      data_tests:
        - window_length:
            arguments:
              size: '10 minutes'
-#}
{% test window_length(model, size) %}
select * from {{ model }}
where window_end != window_start + interval {{ size }}
{% endtest %}
