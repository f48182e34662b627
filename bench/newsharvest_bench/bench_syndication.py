"""`newsharvest bench syndication`: which copy of a syndicated story is the original, replayed.

A WARC of news pages with a syndicated copy after every COPY_EVERY-th page: the same story text
in another site's (plainer) page, at another URL, the same fetch time. The copy comes after its
original in the archive, so by the replay's rule (archive order) the original is the first copy
and the copy is `duplicate_of` it. A plainer page is extracted sooner, so a pipeline that called
"first" whatever reached the index first flagged originals as copies of their copies (issue 34:
18 of 45 on real pages).

The WARC is replayed with `newsharvest replay` several times: RUNS times as configured, then
with each extraction worker count and replay process count asked for. For each run the final
`duplicate_of` of every article is read from the journal (corrections applied: an article that
names others in `supersedes` makes them its copies) and compared:

* inverted: originals flagged as copies of their (later) copies; must be 0;
* caught: copies flagged `duplicate_of` their original (recall over the pairs);
* false positives: originals flagged as copies of anything;
* identical: every run gave every article the same `duplicate_of`.

Pages: the bench fixture's articles (generated), or `--pages GLOB` HTML files (e.g. a folder of
real news pages; nothing is copied anywhere, the WARC lives in a temporary directory).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import html
import json
import sys
import tempfile
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from glob import glob
from pathlib import Path
from typing import Any

from newsharvest_bench.crawlbench import delete_prefix, redis_answers
from newsharvest_bench.crawlrun import read_jsonl

COPY_EVERY = 5  # a syndicated copy after every fifth page, as in the experiment
RUNS = 3  # repeated runs of the first configuration
DEFAULT_DOMAINS = 8
DEFAULT_ARTICLES_PER_DOMAIN = 25
FILE_SITES = 20  # publisher domains the --pages files are spread over
WIRE_SITES = 3  # the syndicators the copies are spread over
# Every record's WARC-Date: the copies are fetched with their originals.
CLOSE_JACCARD = 0.9  # recall is also given over the pairs at least this similar (as extracted)
FETCH_DATE = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


@dataclass(frozen=True)
class Source:
    url: str
    body: bytes
    copy_of: str | None = None  # the original's URL for a syndicated copy


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "syndication",
        help="replay originals with interleaved syndicated copies: is the original kept?",
    )
    parser.add_argument("--domains", type=int, default=DEFAULT_DOMAINS)
    parser.add_argument("--articles-per-domain", type=int, default=DEFAULT_ARTICLES_PER_DOMAIN)
    parser.add_argument("--pages", default="", help="a glob of HTML files to use as originals")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/0",
                        help="Redis for the shared stores ('': embedded, 1 process)")  # fmt: skip
    parser.add_argument("--workers", default="0,1,2", help="comma list of EXTRACT_WORKERS")
    parser.add_argument("--processes", default="1,2", help="comma list of replay processes")
    parser.add_argument("--runs", type=int, default=RUNS, help="runs of the first configuration")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--verbose", action="store_true", help="name the pairs gone wrong")
    parser.add_argument("--cluster", action="store_true",
                        help="the stores on a local 3-master Redis Cluster (started here from "
                        "redis-server), the index in DEDUP_REDIS_SHARDS=3 shards")  # fmt: skip
    parser.set_defaults(handler=run)


# --- the archive --------------------------------------------------------------------------


def fixture_originals(domains: int, per_domain: int) -> list[tuple[str, bytes]]:
    """The bench fixture's own articles (no syndicated copies of its own), as it serves them."""
    from urllib.parse import urlsplit

    from crawler.newsroom import Newsroom

    room = Newsroom(seed=7, n_domains=domains, articles_per_domain=per_domain)
    found = []
    for page in room.articles():
        if page.duplicate_of:
            continue
        parts = urlsplit(page.url)
        _, _, body = room.render(parts.netloc, parts.path or "/")
        if isinstance(body, bytes):
            found.append((page.url, body))
    return found


def file_originals(pattern: str) -> list[tuple[str, bytes]]:
    """HTML files (.html or .html.gz) as originals, each archived under its own canonical URL
    (as a crawl fetches a page), else at a made-up URL on one of FILE_SITES domains."""
    from extractors import extract

    found = []
    seen: set[str] = set()
    for number, name in enumerate(sorted(glob(pattern))):
        path = Path(name)
        body = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
        stem = path.name.split(".")[0]
        url = f"http://publisher{number % FILE_SITES}.test/{number}/{stem}"
        article = extract(body, url)
        own = article.canonical_url if article is not None else None
        if own and own.startswith(("http://", "https://")) and own not in seen:
            url = own
        seen.add(url)
        found.append((url, body))
    return found


def syndicated_copy(url: str, body: bytes, number: int) -> Source | None:
    """The story of the page at `url` in a wire site's plain page: the same paragraphs behind
    the wire's dateline, its own URL and canonical link. None when the page has no
    article to copy."""
    from extractors import extract

    article = extract(body, url)
    if article is None or not article.text:
        return None
    site = f"wire{number % WIRE_SITES}.test"
    copy_url = f"http://{site}/syndicated/{number}"
    blocks = [html.escape(block) for _, block in article.blocks]
    blocks[0] = f"WIRE ({site}) &mdash; {blocks[0]}"  # the wire's dateline
    paragraphs = "".join(f"<p>{block}</p>" for block in blocks)
    title = html.escape(article.title or "Wire story")
    page = (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f'<title>{title} | Wire</title><link rel="canonical" href="{copy_url}"></head><body>'
        f'<nav><a href="http://{site}/">Home</a> <a href="http://{site}/world">World</a></nav>'
        f"<h1>{title}</h1><article>{paragraphs}</article>"
        f"<footer>&copy; Wire {number % WIRE_SITES}</footer></body></html>"
    )
    return Source(copy_url, page.encode("utf-8"), copy_of=url)


def interleave(originals: list[tuple[str, bytes]]) -> list[Source]:
    """The originals in order, each COPY_EVERY-th followed at once by its syndicated copy."""
    sources: list[Source] = []
    for number, (url, body) in enumerate(originals, start=1):
        sources.append(Source(url, body))
        if number % COPY_EVERY == 0 and (copy := syndicated_copy(url, body, number)):
            sources.append(copy)
    return sources


def write_warc(sources: list[Source], path: Path) -> None:
    from crawler.warc.records import gzip_member, response_record

    headers = [(b"Content-Type", b"text/html; charset=utf-8")]
    with path.open("wb") as handle:
        for source in sources:
            record = response_record(source.url, 200, headers, source.body, date=FETCH_DATE)
            handle.write(gzip_member(record.serialize()))


# --- the verdicts -------------------------------------------------------------------------


def final_duplicates(items: list[dict[str, Any]]) -> dict[str, str | None]:
    """Every article's final `duplicate_of`, by its fetched URL: its own verdict, overridden by
    a later correction (an article naming it in `supersedes`), followed to the first copy."""
    ids = {item["url"]: _doc_id(item) for item in items}
    parent: dict[str, str | None] = {doc: None for doc in ids.values()}
    for item in items:
        parent[_doc_id(item)] = item.get("duplicate_of")
    for item in items:
        for copy in item.get("supersedes") or ():
            parent[copy] = _doc_id(item)
    final = {}
    for url, doc in ids.items():
        root, steps = doc, 0
        while parent.get(root) and steps <= len(parent):
            root, steps = parent[root] or root, steps + 1
        final[url] = None if root == doc else root
    return final


def _doc_id(item: dict[str, Any]) -> str:
    """The article's id in the near-duplicate index (pipelines/dedup/pipeline.py identity)."""
    from crawler.core.urls import publisher_domain

    url, canonical = item["url"], item.get("canonical_url") or item["url"]
    return url if publisher_domain(canonical) != publisher_domain(url) else canonical


def true_jaccard(a: str, b: str) -> float:
    from pipelines.fingerprints import true_jaccard as jaccard

    return jaccard(a, b)


def score(
    sources: list[Source], final: dict[str, str | None], texts: dict[str, str]
) -> dict[str, Any]:
    copies = [s for s in sources if s.copy_of]
    copy_urls = {s.url for s in copies}
    of_copy = {s.copy_of: s.url for s in copies}
    originals = [s for s in sources if not s.copy_of and s.url in final]
    inverted = sum(1 for s in originals if final[s.url] and final[s.url] == of_copy.get(s.url))
    false_positives = sum(1 for s in originals if final[s.url] and final[s.url] not in copy_urls)
    pairs = [s for s in copies if s.url in final and s.copy_of in final]
    caught = sum(1 for s in pairs if final[s.url] == s.copy_of)
    close = [s for s in pairs if true_jaccard(texts[s.url], texts[s.copy_of]) >= CLOSE_JACCARD]
    caught_close = sum(1 for s in close if final[s.url] == s.copy_of)
    digest = hashlib.sha256(json.dumps(sorted(final.items())).encode()).hexdigest()[:12]
    return {"articles": len(final), "pairs": len(pairs), "caught": caught,
            "recall": caught / len(pairs) if pairs else None, "close_pairs": len(close),
            "recall_close": caught_close / len(close) if close else None, "inverted": inverted,
            "false_positives": false_positives, "verdicts": digest}  # fmt: skip


def missed(sources: list[Source], final: dict[str, str | None]) -> None:
    """Print the copies not flagged as copies of their original, and what they got."""
    for source in sources:
        if source.copy_of and source.url in final and final[source.url] != source.copy_of:
            got = final.get(source.copy_of, "not output")
            print(f"    {source.url}: {final[source.url]}; its original {source.copy_of}: {got}",
                  file=sys.stderr)  # fmt: skip


# --- the runs -----------------------------------------------------------------------------


def replay(
    warc: Path, workers: int, processes: int, redis_url: str, workdir: Path, shards: int = 1
) -> list[Any]:
    """One `newsharvest replay` of the WARC in fresh stores (the index in `shards` shards);
    the journalled items."""
    from crawler.cli.replay import shard_journal
    from newsharvest_bench.crawlrun import crawl_env, run_to_end

    prefix = f"nhbench:{uuid.uuid4().hex[:8]}"
    journal = workdir / "articles.jsonl"
    workdir.mkdir(parents=True)
    env = crawl_env(workdir / "state", NEWSHARVEST_REDIS_URL=redis_url,
                    NEWSHARVEST_REDIS_KEY_PREFIX=prefix)  # fmt: skip
    command = [sys.executable, "-m", "crawler.cli", "replay", str(warc), "--journal",
               str(journal), "--set", f"EXTRACT_WORKERS={workers}",
               "--set", "REPLAY_PROGRESS_SECONDS=3600", "--log-level", "WARNING"]  # fmt: skip
    if processes > 1:
        command += ["--processes", str(processes)]
    if shards > 1:
        command += ["--set", f"DEDUP_REDIS_SHARDS={shards}"]
    try:
        run_to_end(command, env, workdir / "replay.log")
    finally:
        if redis_url:
            delete_prefix(redis_url, prefix)
    journals = [journal] if processes == 1 else [
        Path(shard_journal(str(journal), (i, processes))) for i in range(processes)]  # fmt: skip
    return [item for path in journals for item in read_jsonl(path)]


def configurations(args: argparse.Namespace, shared: bool) -> list[tuple[int, int]]:
    workers = [int(w) for w in args.workers.split(",") if w.strip()]
    processes = [int(p) for p in args.processes.split(",") if p.strip()]
    if not shared:
        processes = [1]  # several processes share their stores through Redis only
    first = (workers[0], processes[0])
    runs = [first] * max(1, args.runs)
    return runs + [(w, p) for p in processes for w in workers if (w, p) != first]


def run(args: argparse.Namespace) -> int:
    if args.cluster:
        from newsharvest_bench.localcluster import MASTERS, LocalRedisCluster, missing_binaries

        if missing_binaries():
            print(f"--cluster needs {' and '.join(missing_binaries())}", file=sys.stderr)
            return 2
        with LocalRedisCluster.started() as cluster:
            return replays(args, cluster.url, MASTERS)
    redis_url = args.redis_url if args.redis_url and redis_answers(args.redis_url) else ""
    return replays(args, redis_url, 1)


def replays(args: argparse.Namespace, redis_url: str, shards: int) -> int:
    """Every configuration's replay of one archive, scored; 0 when none inverted an original
    and all gave the same verdicts."""
    originals = (file_originals(args.pages) if args.pages
                 else fixture_originals(args.domains, args.articles_per_domain))  # fmt: skip
    sources = interleave(originals)
    results = []
    with tempfile.TemporaryDirectory() as scratch:
        warc = Path(scratch) / "syndication.warc.gz"
        write_warc(sources, warc)
        print(f"WARC: {len(sources)} pages, {sum(1 for s in sources if s.copy_of)} copies",
              file=sys.stderr)  # fmt: skip
        for number, (workers, processes) in enumerate(configurations(args, bool(redis_url))):
            workdir = Path(scratch) / f"run-{number}"
            items = replay(warc, workers, processes, redis_url, workdir, shards)
            found = {"workers": workers, "processes": processes,
                     **score(sources, final_duplicates(items),
                             {item["url"]: item.get("text") or "" for item in items})}  # fmt: skip
            print(f"  {found}", file=sys.stderr)
            if args.verbose:
                missed(sources, final_duplicates(items))
            results.append(found)
    stores = "redis" if redis_url else "embedded"
    if shards > 1:
        stores = f"redis cluster ({shards} index shards)"
    figures = {"stores": stores, "runs": results,
               "identical": len({r["verdicts"] for r in results}) == 1,
               "inverted": max(r["inverted"] for r in results),
               "false_positives": max(r["false_positives"] for r in results),
               "recall": min(r["recall"] or 0.0 for r in results),
               "recall_close": min(r["recall_close"] or 0.0 for r in results)}  # fmt: skip
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        print(f"{figures['stores']} stores, {len(results)} replays: inverted (originals flagged "
              f"as copies of later copies) {figures['inverted']}, recall {figures['recall']:.3f} "
              f"(at J >= {CLOSE_JACCARD}: {figures['recall_close']:.3f})"
              f", false positives {figures['false_positives']}, identical verdicts in every "
              f"run: {figures['identical']}")  # fmt: skip
    return 0 if figures["identical"] and figures["inverted"] == 0 else 1
