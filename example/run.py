"""Build the example window views on the embedded local Spark and print what they computed."""

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


def main() -> int:
    dbt = dbtRunner()
    common = ["--project-dir", str(HERE), "--profiles-dir", str(HERE)]
    if not dbt.invoke(["build", *common]).success:
        return 1
    for model, order in SHOW.items():
        print(f"\n== {model}")
        sql = f"select * from {{{{ ref('{model}') }}}} order by {order}"
        if not dbt.invoke(["show", "--inline", sql, "--limit", "12", "--quiet", *common]).success:
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
