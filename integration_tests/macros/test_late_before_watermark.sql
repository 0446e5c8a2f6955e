{#-
  late_before_watermark: every row of a streaming window view's late table (`<model>__late`) was
  judged against a watermark at or after its event time `column_name`, which is what made it late
  (a row whose windows closed at W, or an over-window row at or before W); returns the rows that
  were not. Rows with a NULL event time are late without a watermark and pass.
-#}
{% test late_before_watermark(model, column_name) %}
select * from {{ model }}
where {{ column_name }} > _watermark or _batch_id is null
{% endtest %}
