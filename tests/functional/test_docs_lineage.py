"""`dbt docs generate` on the embedded default (design §8): window views depend on their
sources and refs in the manifest, their columns (with window_start, window_end, window_time)
are in the catalog, and their window summary is recorded with the table."""

import json
from datetime import datetime, timedelta

from tests.support.data import FLIP145_BID as BID

SCHEMA_YML = """
version: 2
sources:
  - name: raw
    schema: "{{ target.schema }}"
    tables:
      - name: raw_bids
        description: Bids loaded outside dbt.
models:
  - name: bids_per_window
    description: Revenue per 10-minute tumbling window.
    columns:
      - name: window_start
        data_tests: [not_null]
  - name: closed_hops
    description: Revenue per 10-minute window every 5 minutes, once the window has closed.
"""


def t(hhmm: str) -> datetime:
    h, m = hhmm.split(":")
    return datetime(2020, 4, 15, int(h), int(m))


def load_json(path) -> dict:
    return json.loads(path.read_text())


def test_docs_generate_shows_window_views_with_lineage(project):
    # a source is a table dbt did not build: load it with Spark, as an ingestion job would
    project.spark.sql(f"create database if not exists {project.schema}")
    project.spark.sql(
        f"""
        create table {project.schema}.raw_bids using parquet as
        select * from values
          (timestamp'2020-04-15 08:07:00', 2, 'A'), (timestamp'2020-04-15 08:11:00', 3, 'B'),
          (timestamp'2020-04-15 08:05:00', 4, 'C'), (timestamp'2020-04-15 08:09:00', 5, 'D'),
          (timestamp'2020-04-15 08:13:00', 1, 'E'), (timestamp'2020-04-15 08:17:00', 6, 'F')
          as t(bidtime, price, item)
        """
    )
    project.seed("bid", BID)
    project.write("models/schema.yml", SCHEMA_YML)
    project.model(
        "bids_per_window",
        """
        {{ config(materialized='window_view') }}
        select window_start, window_end, window_time, sum(price) as price, count(*) as bids
        from {{ window_views.tumble(source('raw', 'raw_bids'), 'bidtime', '10 minutes') }}
        group by window_start, window_end, window_time
        """,
    )
    project.model(
        "closed_hops",
        """
        {{ config(materialized='window_view', emit='on_window_close',
                  watermark={'column': 'bidtime', 'delay': '2 minutes'}) }}
        select window_start, window_end, window_time, sum(price) as price
        from {{ window_views.hop(ref('bid'), 'bidtime', '5 minutes', '10 minutes') }}
        group by window_start, window_end, window_time
        """,
    )
    project.dbt("build")
    project.dbt("docs", "generate")

    # the views hold what their docs describe (W = 08:17 - 2 min closes the hops ending by 08:15)
    assert [r[:2] + r[3:] for r in project.rows("bids_per_window")] == [
        (t("8:00"), t("8:10"), 11, 3),
        (t("8:10"), t("8:20"), 10, 3),
    ]
    assert {r[2] - r[1] for r in project.rows("bids_per_window")} == {timedelta(microseconds=-1)}
    assert [(r[0], r[1], r[3]) for r in project.rows("closed_hops")] == [
        (t("8:00"), t("8:10"), 11),
        (t("8:05"), t("8:15"), 15),
    ]

    target = project.root / "target"
    manifest = load_json(target / "manifest.json")
    catalog = load_json(target / "catalog.json")
    source_id, seed_id = "source.wv_test.raw.raw_bids", "seed.wv_test.bid"
    tumble_id, hop_id = "model.wv_test.bids_per_window", "model.wv_test.closed_hops"

    # lineage: each window view depends on what its TVF reads, through source() / ref()
    nodes = manifest["nodes"]
    assert nodes[tumble_id]["depends_on"]["nodes"] == [source_id]
    assert nodes[hop_id]["depends_on"]["nodes"] == [seed_id]
    assert "macro.window_views.tumble" in nodes[tumble_id]["depends_on"]["macros"]
    assert "macro.window_views.hop" in nodes[hop_id]["depends_on"]["macros"]
    assert tumble_id in manifest["child_map"][source_id]
    assert hop_id in manifest["child_map"][seed_id]
    for node_id in (tumble_id, hop_id):
        assert nodes[node_id]["config"]["materialized"] == "window_view"
    assert nodes[hop_id]["config"]["emit"] == "on_window_close"
    assert nodes[hop_id]["config"]["watermark"] == {"column": "bidtime", "delay": "2 minutes"}
    assert nodes[tumble_id]["description"] == "Revenue per 10-minute tumbling window."

    # catalog: the source, the seed and both window views, with their columns and types
    assert catalog["errors"] is None
    assert source_id in catalog["sources"]
    assert seed_id in catalog["nodes"]
    window_columns = {"window_start": "timestamp", "window_end": "timestamp", "window_time": "timestamp"}
    expected_columns = {
        tumble_id: {**window_columns, "price": "bigint", "bids": "bigint"},
        hop_id: {**window_columns, "price": "bigint"},
    }
    for node_id, columns in expected_columns.items():
        entry = catalog["nodes"][node_id]
        assert entry["metadata"]["type"] == "table"
        assert entry["metadata"]["schema"] == project.schema
        found = {name: c["type"].replace("long", "bigint") for name, c in entry["columns"].items()}
        assert found == columns, node_id

    # the window summary is on the table: comment (description first) and window_views.* properties
    summaries = {}
    for model, description, expected in [
        (
            "bids_per_window",
            "Revenue per 10-minute tumbling window.",
            {
                "window_views.windows": "tumble(time_col=bidtime, size=10 minutes)",
                "window_views.execution": "batch",
                "window_views.emit": "on_update",
                "window_views.late_data": "table",
            },
        ),
        (
            "closed_hops",
            "Revenue per 10-minute window every 5 minutes, once the window has closed.",
            {
                "window_views.windows": "hop(time_col=bidtime, slide=5 minutes, size=10 minutes)",
                "window_views.emit": "on_window_close",
                "window_views.watermark": "bidtime - 2 minutes",
                "window_views.watermark_reached": "2020-04-15 08:15:00",
            },
        ),
    ]:
        relation = f"{project.schema}.{model}"
        properties = {r.key: r.value for r in project.spark.sql(f"show tblproperties {relation}").collect()}
        assert expected.items() <= properties.items(), properties
        details = {r.col_name: r.data_type for r in project.spark.sql(f"describe table extended {relation}").collect()}
        comment = details["Comment"]
        assert comment.startswith(f"{description} Window view ("), comment
        for key, value in expected.items():
            assert f"{key.split('.', 1)[1]}: {value}" in comment
        summaries[model] = expected["window_views.windows"]

    # what `dbt docs serve` shows comes from the catalog: the table comment and a "Window view" stat
    for model, window in summaries.items():
        node_id = f"model.wv_test.{model}"
        assert window in json.dumps(catalog["nodes"][node_id]["stats"]), catalog["nodes"][node_id]["stats"]
        assert " Window view (" in catalog["nodes"][node_id]["metadata"]["comment"]
        # the table's row count: never the `0 rows` Spark says of a table it never analyzed
        rows = catalog["nodes"][node_id]["stats"].get("rows")
        assert rows and rows["value"] == project.spark.table(f"{project.schema}.{model}").count(), rows
