-- the append-only input a stream reads: your loader's landing table (a dbt source) in a real
-- project; here an incremental model that appends the seed's bids it has not seen
{{ config(materialized='incremental', incremental_strategy='append') }}
select bidtime, price, item from {{ ref('bids') }}
{% if is_incremental() %}
where bidtime > (select max(bidtime) from {{ this }})
{% endif %}
