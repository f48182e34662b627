"""Index sinks: where clean articles end up (SQLite full-text, PostgreSQL, a Redis Stream).

Each sink is an item pipeline switched on by its own setting (several may be on at once); all
share the batching, retry and spill-journal machinery of `pipelines.sinks.base`.
"""
