"""Per-domain monitoring: live counters, timings, alerts, Prometheus metrics and a dashboard.

extension.py   the Scrapy extension: mirrors every `inc_domain`/`observe_domain` event into
               batches, flushes them to a store, runs the alert rules, serves /metrics
store.py       Redis (shared by workers) or memory (+ snapshot file) storage
alerts.py      the alert rules (pure)
prometheus.py  the Prometheus collector and endpoint
dashboard.py   `newsharvest monitor`: the dashboard page and its JSON API
"""
