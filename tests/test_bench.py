"""`newsharvest bench extraction` on a tiny dataset laid out like the real benchmark."""

from __future__ import annotations

import gzip
import json
import os
import re
import resource
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from newsharvest_bench import bench_extraction
from tests.support.commands import newsharvest

PAGES = Path(__file__).parent / "fixtures" / "pages"
CHILD_SECONDS = 30


def _dataset(root: Path) -> Path:
    """Three fixture pages with gold bodies: two extracted perfectly, one NULL page whose gold is
    a body (so recall suffers and precision does not count it)."""
    gold = {
        "wrapper-named-sidebar": (PAGES / "wrapper-named-sidebar.html", None),
        "div-paragraphs": (PAGES / "div-paragraphs.html", None),
        "video-page": (PAGES / "video-page.html", "A body the page does not carry at all."),
    }
    from extractors import extract

    truth = {}
    (root / "html").mkdir(parents=True)
    for page_id, (path, body) in gold.items():
        data = path.read_bytes()
        (root / "html" / f"{page_id}.html.gz").write_bytes(gzip.compress(data))
        article = extract(data)
        truth[page_id] = {
            # An address without a headline's slug: the gold above was extracted without one.
            "url": f"https://example.test/page?id={page_id}",
            "articleBody": body or article.text,
        }
    (root / "ground-truth.json").write_text(json.dumps(truth))
    return root


def test_bench_prints_scores_for_all_pages_and_both_halves(tmp_path: Path) -> None:
    result = newsharvest(
        "bench", "extraction", "--dataset", str(_dataset(tmp_path)), "--worst", "1"
    )
    assert result.returncode == 0, result.stderr
    rows = {
        line.split()[1]: line.split()[2:]
        for line in result.stdout.splitlines()
        if line.startswith("newsharvest ") and line.split()[1] in ("all", "A", "B")
    }
    assert set(rows) == {"all", "A", "B"}
    assert sum(int(rows[half][0]) for half in ("A", "B")) == 3
    n, f1, precision, recall, accuracy, median, p95, empty = rows["all"]
    assert (n, precision, empty) == ("3", "1.0", "1")  # the NULL page has no precision to lose
    assert float(recall) == pytest.approx(2 / 3, abs=1e-4)
    assert float(f1) == pytest.approx(0.8, abs=1e-4) and float(accuracy) == pytest.approx(
        2 / 3, abs=1e-4
    )
    assert float(median) > 0 and float(p95) >= float(median)
    assert re.search(r"newsharvest methods: dom 2, NULL 1", result.stdout)
    assert "video-page" in result.stdout  # the worst page is listed


def test_bench_counts_the_pages_of_each_failure_class_per_extractor(tmp_path: Path) -> None:
    from extractors import extract

    root = _dataset(tmp_path)
    truth = json.loads((root / "ground-truth.json").read_text())
    whole = truth["div-paragraphs"]["articleBody"]
    # The same page twice more: once with a gold body twice as long as what is extracted
    # (recall 0.5-0.9), once with a gold body that shares nothing with it (the wrong text).
    other = extract((PAGES / "wrapper-named-sidebar.html").read_bytes()).text
    for page_id, gold in (("partial", f"{whole}\n{other[: len(whole) // 2]}"), ("wrong", other)):
        data = (PAGES / "div-paragraphs.html").read_bytes()
        (root / "html" / f"{page_id}.html.gz").write_bytes(gzip.compress(data))
        truth[page_id] = {"url": f"https://example.test/page?id={page_id}", "articleBody": gold}
    (root / "ground-truth.json").write_text(json.dumps(truth))
    result = newsharvest("bench", "extraction", "--dataset", str(root))
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stdout.splitlines() if "failure classes" in line]
    expected = (
        f"{root.name}: failure classes (pages): newsharvest empty on a true article 1, "
        "recall 0.5-0.9 1, F1 < 0.5 with output 1"
    )
    assert lines == [expected, expected]  # under the set's table, and in the summary


@pytest.mark.parametrize(
    ("gold", "text", "expected"),
    [
        ("one two three four five six", "", "empty on a true article"),
        ("", "", None),  # no article, and none returned
        ("one two three four five six", "one two three four five six", None),
        ("a b c d e f g h i j", "a b c d e f g h", "recall 0.5-0.9"),  # 5 of 7 shingles
        ("one two three four five six", "nine ten eleven twelve", "F1 < 0.5 with output"),
    ],
)
def test_failure_class_of_a_page(gold: str, text: str, expected: str | None) -> None:
    from extractors.evaluation import score_page

    page = bench_extraction.BenchPage("p", "", gold, b"")
    assert bench_extraction.failure_class(page, text, score_page(gold, text)) == expected


def test_bench_without_a_dataset_says_how_to_give_one(tmp_path: Path) -> None:
    result = newsharvest("bench", "extraction", "--dataset", str(tmp_path / "missing"))
    assert result.returncode == 2 and "dataset not found" in result.stderr


def test_a_missing_peer_library_is_a_clear_error_with_the_install_command(monkeypatch) -> None:
    def missing() -> bench_extraction.ExtractorFn:
        raise ImportError("No module named 'ghost'")

    monkeypatch.setitem(bench_extraction.PEERS, "ghost", (missing, "ghost"))
    with pytest.raises(SystemExit) as stopped:
        bench_extraction.load_extractors("ghost")
    assert "pip install -e './bench[peers]'" in str(stopped.value)
    with pytest.raises(SystemExit, match="unknown peer"):
        bench_extraction.load_extractors("nonesuch")


def test_halves_are_a_fixed_split_by_sha1_of_the_id() -> None:
    page = bench_extraction.BenchPage("042bb7b5", "", "", b"")
    assert page.half == bench_extraction.BenchPage("042bb7b5", "x", "y", b"z").half
    halves = {bench_extraction.BenchPage(f"page-{i}", "", "", b"").half for i in range(20)}
    assert halves == {"A", "B"}


def test_bench_extractor_all_prints_one_table_with_every_variant_and_metric(
    tmp_path: Path,
) -> None:
    from extractors.registry import VARIANTS

    dataset = str(_dataset(tmp_path))
    result = newsharvest("bench", "extraction", "--dataset", dataset, "--extractor", "all")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    header = next(line for line in lines if line.startswith("extractor "))
    for column in ("F1", "word F1", "char F1", "CleanEval F1", "NULL", "median ms"):
        assert column in header
    rows = {
        line.split()[0]: line.split()[1:]
        for line in lines
        if line.split()[:1] in [[v] for v in VARIANTS]
    }
    assert set(rows) == set(VARIANTS)
    # The default chain extracted the gold of two pages exactly; the third page is NULL.
    f1, precision, recall, *seed_metrics, nulls, median = rows["default"]
    assert (precision, nulls) == ("1.0", "1") and float(recall) == pytest.approx(2 / 3, abs=1e-4)
    assert all(float(value) == pytest.approx(float(f1), abs=1e-4) for value in seed_metrics[::3])
    assert float(median) > 0
    assert "HTML-tree filter (Viveros-Jiménez et al.): depth 2 has" in result.stdout
    assert "combination" in result.stdout


def test_bench_extractor_list_and_unknown_names(tmp_path: Path) -> None:
    dataset = str(_dataset(tmp_path))
    result = newsharvest(
        "bench", "extraction", "--dataset", dataset, "--extractor", "cetr-tm:0.5,boilerpipe"
    )
    assert result.returncode == 0, result.stderr
    names = [line.split()[0] for line in result.stdout.splitlines() if line[:4] in ("cetr", "boil")]
    assert names == ["cetr-tm:0.5", "boilerpipe"]
    unknown = newsharvest("bench", "extraction", "--dataset", dataset, "--extractor", "nope")
    assert unknown.returncode != 0 and "unknown extractor 'nope'" in unknown.stderr


@pytest.mark.slow
def test_bench_pipeline_crawls_every_article_and_reports_sane_figures(redis_url: str) -> None:
    from crawler.newsroom import Newsroom

    result = newsharvest("bench", "pipeline", "--domains", "3", "--articles-per-domain", "5",
                         "--variants", "redis", "--workers", "0", "--redis-url", redis_url,
                         "--json")  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    room = Newsroom(seed=1, n_domains=3, articles_per_domain=5)
    [run] = json.loads(result.stdout)["runs"]
    assert (run["variant"], run["workers"]) == ("redis", 0)
    # Every article is scraped; every other page (video, gallery, index) is a NULL.
    assert run["articles"] == len(room.articles()) == 15
    assert run["nulls"] == len(room.non_articles())
    assert run["elapsed"] > 0 and run["cpu_seconds"] > 0
    assert run["articles_per_second"] == pytest.approx(run["articles"] / run["elapsed"])
    assert len(run["core_busy"]) == os.cpu_count()
    assert all(0 <= share <= 1 for share in run["core_busy"]) and max(run["core_busy"]) > 0
    assert run["peak_rss_mb"] > 20  # a Python process with Scrapy and lxml loaded
    assert run["rss_series"] and all(
        0 <= articles <= run["articles"] and 0 < mb <= run["peak_rss_mb"]
        for articles, mb in run["rss_series"]
    )
    # Not dedup: its fingerprints are made with the extraction (and made again from their
    # blocks by the notices stage), so it does no CPU work of its own here.
    for stage in ("extract", "notices", "sink/sqlite"):
        assert run["stages"][f"{stage}/seconds"] > 0, stage


@pytest.mark.slow
def test_bench_replay_repeated_compares_alternate_runs_and_keeps_the_medians(
    redis_url: str,
) -> None:
    from crawler.newsroom import Newsroom

    result = newsharvest("bench", "replay", "--domains", "2", "--articles-per-domain", "4",
                         "--repeat", "3", "--redis-url", redis_url, "--json")  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    figures = json.loads(result.stdout)
    expected = len(Newsroom(seed=1, n_domains=2, articles_per_domain=4).articles())
    assert len(figures["rounds"]) == 3
    for found in figures["rounds"]:
        assert found["crawl"]["articles"] == found["replay"]["articles"] == expected
    for kind in ("crawl", "replay"):
        speeds = sorted(found[kind]["articles_per_second"] for found in figures["rounds"])
        assert figures[kind]["articles_per_second"] == speeds[1]  # the median of three
        assert figures[kind]["cpu_seconds"] > 0


def test_process_tree_memory_counts_the_descendants() -> None:
    from newsharvest_bench.bench_pipeline import process_memory, tree_memory

    nap = f"import time; time.sleep({CHILD_SECONDS})"
    sleeper = f"import subprocess, sys; subprocess.Popen([sys.executable, '-c', {nap!r}]); {nap}"
    child = subprocess.Popen([sys.executable, "-c", sleeper], start_new_session=True)
    try:
        time.sleep(1.0)  # both interpreters started and asleep: their RSS holds still
        # Two sleeping interpreters of about the same size: the tree is well over the child alone
        # (PSS splits the shared libraries' pages between them, so not quite twice).
        assert tree_memory(child.pid) > 1.3 * process_memory(child.pid) > 0
    finally:
        os.killpg(child.pid, signal.SIGKILL)
        child.wait()


def test_the_cpu_of_descendants_the_crawler_never_waits_for_is_counted() -> None:
    """Extraction workers are the fork server's children: their CPU time never reaches the
    crawler's rusage, so the watcher samples every process of the tree."""
    from newsharvest_bench.bench_pipeline import Watcher, tree_cpu_seconds

    burn = "import time\nend = time.process_time() + 0.6\nwhile time.process_time() < end: pass\n"
    # Says when its CPU is spent, then sleeps for a few samples before it exits. The parent exits
    # once it has heard so (and a few samples more), never reaping it: on a loaded machine the
    # 0.6 s of CPU can take longer than any fixed wait, and time spent after the parent (the
    # "crawler") exited is not the watcher's to count.
    # The parent's wait outlasts a refresh of the watcher's list of the tree's processes.
    burner = f"{burn}print('burnt', flush=True)\ntime.sleep(2.5)"
    spawn = f"subprocess.Popen([sys.executable, '-c', {burner!r}], stdout=subprocess.PIPE)"
    heard = "child.stdout.readline(); time.sleep(1.5)"
    parent = f"import subprocess, sys, time; child = {spawn}; {heard}"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    root = subprocess.Popen([sys.executable, "-c", parent])
    watcher = Watcher(root.pid, [])
    thread = threading.Thread(target=watcher.watch, args=(root,))
    thread.start()
    root.wait()
    thread.join()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    crawler_alone = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    assert crawler_alone < 0.5 <= tree_cpu_seconds(watcher, before, after) - crawler_alone


def test_the_stats_of_several_crawlers_in_one_log_are_added_up() -> None:
    """A replay in several processes logs one final stats dump per process."""
    from newsharvest_bench.crawlbench import STATS_DUMP, combined_stats

    log = (
        f"INFO: {STATS_DUMP}:\n{{'elapsed_time_seconds': 15.2, 'item_scraped_count': 2500,\n"
        " 'domain/a.test/fetched': 9}\n"
        f"INFO: {STATS_DUMP}:\n{{'elapsed_time_seconds': 15.6, 'item_scraped_count': 2499}}\n"
    )
    assert combined_stats(log) == {"elapsed_time_seconds": 15.6, "item_scraped_count": 4999.0}


def test_bench_metadata_scores_labelled_pages_and_skips_a_missing_peer(
    tmp_path, monkeypatch
) -> None:
    from newsharvest_bench import bench_metadata

    labelled = Path(__file__).parent / "fixtures" / "metadata"
    for name in ("meta-author-and", "haspart-paywall"):
        for suffix in (".html", ".json"):
            (tmp_path / f"{name}{suffix}").write_bytes((labelled / f"{name}{suffix}").read_bytes())
    truth = json.loads((tmp_path / "haspart-paywall.json").read_text())
    truth["authors"] = ["Somebody Else"]  # a wrong label: the bench must count the miss
    (tmp_path / "haspart-paywall.json").write_text(json.dumps(truth))
    result = newsharvest("bench", "metadata", "--dataset", str(tmp_path), "--compare", "")
    assert result.returncode == 0, result.stderr
    rows = {line.split()[0]: line.split()[1:] for line in result.stdout.splitlines() if line}
    assert rows["authors"] == ["2", "0.500"] and rows["paywalled"] == ["2", "1.000"]
    assert rows["published"] == ["2", "1.000"]

    def missing(module: str) -> None:
        raise ImportError(f"No module named {module!r}")

    monkeypatch.setattr("importlib.import_module", missing)
    assert bench_metadata.load_peers("trafilatura") == {}


def test_hostile_page_shapes_are_measured_within_the_extraction_cap() -> None:
    """`bench hostile-pages` measures each shape at N and 4N: 4N must still fit the 4 MiB the
    extraction reads, or the larger run measures a truncated page."""
    from extractors.document import MAX_DOCUMENT_BYTES
    from newsharvest_bench.bench_hostile_pages import MULTIPLES, SHAPES

    for name, (make, base) in SHAPES.items():
        assert len(make(base * max(MULTIPLES))) <= MAX_DOCUMENT_BYTES * 1.01, name
