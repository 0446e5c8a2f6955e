import json, shutil

def test_probe(project):
    project.seed("bid", "bidtime,price,item\n2020-04-15 08:07:00,2,A\n2020-04-15 08:11:00,3,B\n")
    project.write("models/sources.yml", f"""
    version: 2
    sources:
      - name: raw
        schema: {project.schema}
        tables:
          - name: bid
    models:
      - name: from_source
        description: Revenue per 10-minute window.
    """)
    project.model("from_source", """
    {{ config(materialized='window_view') }}
    select window_start, window_end, window_time, sum(price) as price
    from {{ window_views.tumble(source('raw', 'bid'), 'bidtime', '10 minutes') }}
    group by all
    """)
    project.model("from_ref", """
    {{ config(materialized='window_view') }}
    select * from {{ window_views.hop(ref('bid'), 'bidtime', '5 minutes', '10 minutes') }}
    """)
    import time
    t=time.time(); project.dbt("seed"); print("seed", time.time()-t)
    t=time.time(); project.dbt("build"); print("build", time.time()-t)
    t=time.time(); project.dbt("docs", "generate"); print("docs", time.time()-t)
    for r in project.spark.sql(f"show table extended in {project.schema} like 'from_source'").collect(): print(r.information)
    for r in project.spark.sql(f"show tblproperties {project.schema}.from_source").collect(): print(r)
    shutil.copytree(project.root / "target", "/tmp/scratch/target", dirs_exist_ok=True)
