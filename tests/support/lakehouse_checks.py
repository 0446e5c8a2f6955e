"""What every table format's window view must keep of dbt's own view of it: tests, contracts, unit
tests, `dbt show`, and readers during a build (tests/lakehouse: Delta's and Iceberg's)."""

from __future__ import annotations

from typing import Any

from tests.support.readers import Reader


def dbt_checks_and_readers(project: Any, file_format: str, model: str, source: Any, bids: Any) -> None:
    """dbt build (a column test, an enforced contract, a unit test) and dbt show work on a window
    view of `file_format`, and readers polling it while a build replaces it see the old rows or
    the new ones whole. `model`: the revenue model's SQL with a `{config}` slot; `source` and
    `bids` make and fill the test's source table."""
    source(project)
    project.model("revenue", model.format(config=f", file_format='{file_format}'"))
    project.write(
        "models/revenue.yml",
        """
models:
  - name: revenue
    config: {contract: {enforced: true}}
    columns:
      - {name: window_start, data_type: timestamp, data_tests: [not_null, unique]}
      - {name: window_end, data_type: timestamp}
      - {name: bids, data_type: bigint}
      - {name: price, data_type: bigint}
unit_tests:
  - name: revenue_sums_a_window
    model: revenue
    given:
      - input: source('raw', 'bid')
        rows:
          - {bidtime: '2020-04-15 08:01:00', price: 4}
          - {bidtime: '2020-04-15 08:02:00', price: 5}
    expect:
      rows:
        - {window_start: '2020-04-15 08:00:00', window_end: '2020-04-15 08:10:00', bids: 2, price: 9}
""",
    )
    result = project.dbt("build")
    assert sorted(r.status for r in result.result) == ["pass", "pass", "pass", "success"]
    old = project.rows("revenue")
    shown = project.dbt("show", "-s", "revenue", "--output", "json")
    assert len(shown.result.results[0].agate_table.rows) == len(old)

    bids(project, ("08:25", 5), ("08:41", 1))
    readers = [Reader(project, "revenue"), Reader(project, "revenue", project.spark.newSession())]
    for reader in readers:
        reader.start()
    try:
        project.dbt("run", "-s", "revenue")
    finally:
        for reader in readers:
            reader.stop()
    new = project.rows("revenue")
    assert len(new) == len(old) + 2
    for reader in readers:
        assert reader.failures == []
        assert reader.seen and all(rows in (old, new) for rows in reader.seen), reader.seen
        assert set(reader.counts) <= {len(old), len(new)}
    assert readers[0].seen[-1] == new
