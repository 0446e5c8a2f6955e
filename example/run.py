"""Build the example window views on the embedded local Spark and print what they computed;
then deliver a second batch of bids to the streaming window views and print them again."""

import sys
from pathlib import Path

from dbt.cli.main import dbtRunner

HERE = Path(__file__).resolve().parent
SHOW = {
    "revenue_per_10min": "window_start",
    "revenue_hopping_closed": "window_start",
    "revenue_cumulative": "window_start, window_end",
    "bidder_sessions": "bidder, session_start",
    "top_items_per_window": "window_start, rank",
    "active_bidders_sliding": "item, window_start",
    "price_changes": "stock_id, event_time",
    "order_avg_previous_10": "user_id, order_time",
}
STREAMING = ["revenue_stream_closed", "revenue_stream_live", "bids_vs_asks_closed"]
COMMON = ["--project-dir", str(HERE), "--profiles-dir", str(HERE)]


def show(dbt: dbtRunner, title: str, sql: str, limit: int = 12) -> bool:
    print(f"\n== {title}")
    return dbt.invoke(["show", "--inline", sql, "--limit", str(limit), "--quiet", *COMMON]).success


def stream_messages(result) -> None:
    """The run result of each streaming window view: micro-batches, rows in/out, late rows, watermark."""
    for r in result.result:
        if getattr(r.node.config, "materialized", None) == "window_view" and r.node.config.get("execution") == "streaming":
            print(f"  {r.node.name}: {r.message}")


def progress_lines(since: int) -> None:
    """The streams' progress lines, a line per micro-batch, from dbt's file log (logs/dbt.log,
    written from byte `since` on): dbt shows them on the console at info level while a stream
    runs on a processing-time trigger or catches up in several batches; a one-batch run like
    these logs them at debug level, which the file log keeps."""
    log = HERE / "logs" / "dbt.log"
    with log.open(errors="replace") as f:
        f.seek(since)
        for line in f:
            if "window_view model '" in line and ": micro-batch " in line:
                print("  window_view model " + line.split("window_view model ", 1)[1].rstrip())


def log_size() -> int:
    log = HERE / "logs" / "dbt.log"
    return log.stat().st_size if log.exists() else 0


def show_streams(dbt: dbtRunner, late: bool) -> bool:
    for model in STREAMING:
        if not show(dbt, model, f"select * from {{{{ ref('{model}') }}}} order by all", limit=20):
            return False
    if late:
        # late rows keep their columns, plus the micro-batch that saw them and the watermark then
        sql = (
            "select bidtime, price, item, bidder, _batch_id, _watermark"
            " from {{ target.schema }}.revenue_stream_closed__late order by bidtime"
        )
        if not show(dbt, "revenue_stream_closed__late", sql):
            return False
        # over several inputs: the input a late row came from, and the row as JSON
        sql = "select _side, _row, _batch_id, _watermark from {{ target.schema }}.bids_vs_asks_closed__late"
        return show(dbt, "bids_vs_asks_closed__late", sql)
    return True


def main() -> int:
    dbt = dbtRunner()
    # --full-refresh: the streaming window views (and the append-only bids_landing) start from
    # scratch, so every run of this script shows the same two deliveries
    build = dbt.invoke(["build", "--full-refresh", *COMMON])
    if not build.success:
        return 1
    for model, order in SHOW.items():
        if not show(dbt, model, f"select * from {{{{ ref('{model}') }}}} order by {order}"):
            return 1

    print("\n==== Streaming window views, delivery 1 (bids.csv, latest bid 08:59:47)")
    stream_messages(build)
    if not show_streams(dbt, late=False):
        return 1

    print(
        "\n==== Delivery 2: six more bids (bids_delivery_2.csv), one of them (08:38:20) for a window"
        "\n     the watermark 08:54:47 has already closed, and two more asks (asks.csv: 08:55:00 for C);"
        "\n     `dbt run -s bids_landing+ asks_landing+ --vars '{delivery: 2}'`"
    )
    since = log_size()
    run = dbt.invoke(["run", "-s", "bids_landing+", "asks_landing+", "--vars", "{delivery: 2}", *COMMON])
    if not run.success:
        return 1
    stream_messages(run)
    print("  progress, a line per micro-batch (logs/dbt.log):")
    progress_lines(since)
    if not show_streams(dbt, late=True):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
