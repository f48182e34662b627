"""Per-domain monitoring: live counters, timings, alerts, Prometheus metrics and a dashboard.

pipeline.py    the item stage: tells the extension when an article's content is final
extension.py   the Scrapy extension: mirrors every `inc_domain`/`observe_domain` event into
               batches, flushes them to a store, runs the alert rules, serves /metrics
backends.py    where the numbers live: Redis (shared by workers) or memory (+ snapshot file)
order.py       page outcomes back in fetch order, for the page rules
alerts.py      the alert rules (pure)
prometheus.py  the Prometheus collector and endpoint
dashboard.py   `newsharvest monitor`: the dashboard page and its JSON API

The embedded backend is memory plus a JSON snapshot, not SQLite: monitoring's numbers are
rebuilt by the next crawl, and a snapshot read by `newsharvest monitor` is all a single machine
needs (no write per event, nothing to migrate).
"""
