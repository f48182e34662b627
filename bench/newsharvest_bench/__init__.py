"""newsharvest's tooling: what measures, attacks and exercises the product, and is not part of it.

- Benchmarks: `bench.py` (the `newsharvest bench` command) and one `bench_<name>.py` a
  benchmark; `crawlbench.py`, `crawlrun.py` and `sinkrun.py` run the real crawl and sinks for
  them and for the tests.
- Fuzzing: `fuzz.py` (the `newsharvest fuzz` command), `fuzzing.py` (the targets and their
  invariants), `feed_conformance.py` (feedparser's conformance corpus, judged).
- Hostile input and faults: `hostile.py` (the simulator's hostile.test site, a plugin of
  crawler/newsroom), `faulty.py` (extraction workers that hang, segfault or die),
  `tcpproxy.py` (a connection path that goes down).
- Corpora with ground truth: `neardup.py` (near-duplicate families), `publishers.py` and
  `polyglot.py` (multilingual publishers with labelled notices), `items.py` (perfect items).

It imports the product; the product never imports it (import-linter checks both ways).
"""
