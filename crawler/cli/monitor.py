"""`newsharvest monitor`: serve the per-domain health dashboard, or print it once.

It reads what the crawlers write: Redis when REDIS_URL is set (every worker's numbers), else
the snapshot a local crawl keeps in STATE_DIR/monitor.json. Run it next to a crawl
(or after one) with the same settings profile.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from crawler.cli.table import render_table


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "monitor", help="serve the per-domain health dashboard (table, charts, alerts)"
    )
    parser.add_argument("--host", help="address to listen on (MONITOR_DASHBOARD_ADDRESS)")
    parser.add_argument("--port", type=int, help="port, 0 = any free one (MONITOR_DASHBOARD_PORT)")
    parser.add_argument("--redis-url", help="read this Redis instead of REDIS_URL")
    parser.add_argument("--redis-prefix", help="key prefix (REDIS_KEY_PREFIX)")
    parser.add_argument("--state-dir", type=Path, help="local crawls' state directory")
    output = parser.add_mutually_exclusive_group()
    output.add_argument("--print", action="store_true", help="print the table once and exit")
    output.add_argument("--json", action="store_true", help="print the page's JSON and exit")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from pipelines.monitoring.dashboard import DashboardServer, StateSource, dashboard_state

    settings = args.settings
    overrides = {
        "REDIS_URL": args.redis_url,
        "REDIS_KEY_PREFIX": args.redis_prefix,
        "STATE_DIR": args.state_dir and str(args.state_dir),
    }
    for name, value in overrides.items():
        if value is not None:
            settings.set(name, value)
    source = StateSource.from_settings(settings)
    if args.print or args.json:
        try:
            state = dashboard_state(source.read())
        except Exception as error:
            print(f"cannot read the monitoring state from {source.description}: {error}",
                  file=sys.stderr)  # fmt: skip
            return 1
        print(json.dumps(state, indent=2) if args.json else render_text(state))
        return 0
    host = args.host or settings.get("MONITOR_DASHBOARD_ADDRESS")
    port = settings.getint("MONITOR_DASHBOARD_PORT") if args.port is None else args.port
    try:
        server = DashboardServer(
            (host, port), lambda span: dashboard_state(source.read(), span_seconds=span)
        )
    except OSError as error:
        print(f"cannot listen on {host}:{port}: {error}", file=sys.stderr)
        return 2
    print(f"dashboard: http://{host}:{server.server_address[1]}/  (data: {source.description})",
          flush=True)  # fmt: skip
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


def render_text(state: dict[str, Any]) -> str:
    """The dashboard as text: the domain table, then the active alerts."""
    from pipelines.monitoring.alerts import duration

    def pct(value: float | None) -> str:
        return "-" if value is None else f"{100 * value:.1f}%"

    def rate(value: float | None) -> str:
        return "-" if value is None else f"{value:.1f}"

    def age(seconds: float | None) -> str:
        return "never" if seconds is None else duration(seconds)

    rows = [
        [row["domain"], rate(row["yield_per_hour"]), row["articles"], pct(row["null_rate"]),
         pct(row["duplicate_rate"]), row["errors"], age(row["staleness_seconds"]),
         ",".join(row["alerts"]) or "-"]
        for row in state["domains"]
    ]  # fmt: skip
    header = ["domain", "yield/h", "articles", "NULL", "dups", "errors", "last article", "alerts"]
    lines = [f"monitoring data: {state['source']}", window_line(state), "",
             render_table(header, rows), ""]  # fmt: skip
    if state["alerts"]:
        lines.append(f"{len(state['alerts'])} active alert(s):")
        lines += [f"  {a['kind']:<14} {a['domain']}: {a['message']}" for a in state["alerts"]]
    else:
        lines.append("no active alerts")
    return "\n".join(lines)


def window_line(state: dict[str, Any]) -> str:
    """What the counts and rates cover: the span chosen, or all the data kept; and why a yield
    per hour is missing when the crawling was too short for one."""
    from pipelines.monitoring.alerts import duration

    if not state["domains"]:
        return "no monitoring data yet"
    window = duration(state["window_seconds"])
    if state["span_seconds"] is None:
        line = f"counts and rates over all the data kept ({window})"
    else:
        line = f"counts and rates over the last {window}"
    if any(row["yield_per_hour"] is None for row in state["domains"]):
        line += (f"; yield/h '-': under {duration(state['rate_min_seconds'])} of crawling, "
                 "too short for a rate per hour")  # fmt: skip
    return line
