"""Distributed profile: Redis everywhere, scrapy-redis scheduler; N workers, one command.

    NEWSHARVEST_REDIS_URL=redis://host:6379/0 SCRAPY_SETTINGS_MODULE=settings.distributed \\
        scrapy crawl feeds -a feeds=feeds.txt -a continuous=1 \\
        -s HARVEST_JOURNAL_PATH=out/$HOSTNAME.jsonl

Every worker shares the request queue and dupefilter (crawler/scheduler.py), the harvest ledger
and feed schedules (crawler/ledger.py: each feed is polled by one worker at a time, each article
claimed by one), and every other stage's state, because REDIS_URL is set.
"""

from __future__ import annotations

from settings.base import *  # noqa: F403  (a profile is the base plus its overrides)
from settings.env import apply_environment

# Shared state: every stage that keeps state uses Redis when REDIS_URL is set
# (NEWSHARVEST_REDIS_URL in the environment).
REDIS_URL = "redis://127.0.0.1:6379/0"

SCHEDULER = "crawler.scheduler.RedisScheduler"  # scrapy-redis queue shared by all workers
# scrapy-redis's priority queue (feed polls, priority 100, first) whose pop survives an outage
SCHEDULER_QUEUE_CLASS = "crawler.scheduler.RedisPriorityQueue"
SCHEDULER_PERSIST = True  # a worker that stops must not flush the queue the others work on
SCHEDULER_FLUSH_ON_START = False  # a worker that starts joins the queue as it is
SCHEDULER_IDLE_BEFORE_CLOSE = 0  # never block the reactor waiting on an empty queue
DUPEFILTER_CLASS = "crawler.scheduler.TTLDupeFilter"  # shared, bounded by DUPEFILTER_TTL_SECONDS
SCHEDULER_SERIALIZER = ""  # module with dumps/loads for queued requests; empty: pickle

apply_environment(globals())  # NEWSHARVEST_<SETTING> overrides this profile's values too
