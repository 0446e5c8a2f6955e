-- rows in one relation and not the other, both ways (duplicates counted)
with actual as (select window_start, window_end, price from {{ ref('pkg_hop_agg') }}),
expected as (select window_start, window_end, price from {{ ref('pkg_hop_expected') }})
(select 'missing' as problem, * from (select * from expected except all select * from actual))
union all
(select 'unexpected' as problem, * from (select * from actual except all select * from expected))
