"""The shared core: what every crawl module and every pipeline stage may use, and nothing else.

items (the ArticleItem), domainstats (per-domain counters and stage timing), connection (the
one Redis client factory), keys (the one Redis key registry), outage (the Redis outage gate and
start-up failures), clock (injectable time), paths (STATE_DIR, OUTPUT_DIR), sqlite (opening an
embedded store), lua (loading Redis scripts), spill (the append-only spill journal), commit (what
an output stage needs of the harvest ledger), urls (canonical URLs, publisher domains), worker
(this process's name among the workers).

The core imports nothing of ours but `extractors` (the import contract in pyproject.toml).
"""
