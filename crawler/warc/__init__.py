"""Web archives (WARC, ISO 28500) in and out.

* `records`: building WARC/1.1 records (one gzip member each) and reading records back (the
  FastWARC or warcio reader, each behind one small interface);
* `writer`: the rotating, crash-safe file writer (a thread with a bounded queue), and the repair
  of a file a killed crawler left open;
* `capture`: the downloader middleware that archives every fetched response (WARC_CAPTURE_*);
* `replay`: turning archived responses back into what the pipeline gets from a fetch, and the
  per-file resume offsets kept in the harvest state.

docs/archives.md tells the story from the user's side.
"""
