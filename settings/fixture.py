"""Fixture profile: the local profile pointed at the local news-site fixture (demo and tests).

The fixture serves every synthetic publisher domain from one loopback port, reached through
PROXY_URL. Politeness stays on; only its delays shrink, because the fixture answers in
microseconds and a demo must finish in seconds.
"""

from __future__ import annotations

from settings.env import apply_environment
from settings.local import *  # noqa: F403  (a profile is the local profile plus its overrides)

DOWNLOAD_DELAY = 0.0  # the fixture is ours: no need to wait between requests
AUTOTHROTTLE_START_DELAY = 0.05  # latency is known after the first response anyway
AUTOTHROTTLE_TARGET_CONCURRENCY = 8.0  # let AutoThrottle keep several requests in flight
CONCURRENT_REQUESTS_PER_DOMAIN = 8  # the fixture is ours
RETRY_TIMES = 0  # a fixture error is a bug to see, not to retry
# The fixture's synthetic publishers live under the special-use .test domain, which production
# refuses; loopback and private addresses stay refused (the hostile cases link to them).
NETWORK_ALLOWLIST = [".test"]

# Monitoring at fixture speed: a crawl lasts seconds, so time buckets and rounds are short.
MONITOR_BUCKET_SECONDS = 1.0
MONITOR_RETENTION_SECONDS = 3600.0
MONITOR_EVALUATE_SECONDS = 1.0
MONITOR_SNAPSHOT_SECONDS = 1.0
MONITOR_FLUSH_SECONDS = 0.5

apply_environment(globals())  # NEWSHARVEST_<SETTING> overrides this profile's values too
