"""Settings checked at start (settings/check.py, settings/renamed.py): an unknown name in our
namespaces stops `scrapy crawl` and every `newsharvest` command with exit status 2 and one line
(name, source, closest names); a renamed name keeps working with one warning naming the new
one; values are checked against the type and range the code assumes; Scrapy's own settings and
names outside our namespaces pass untouched. Through real `scrapy crawl` and `newsharvest`
processes, and in-process for every rename and rule."""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import re
import sqlite3
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
import redis
from packaging.version import Version
from scrapy.settings import SETTINGS_PRIORITIES, Settings

from crawler.core.setting_values import VALUE_CHECKS
from crawler.newsroom import Newsroom, NewsroomServer
from newsharvest_bench.crawlrun import CRAWL_TIMEOUT_SECONDS, crawl_command, crawl_env
from settings import base
from settings.check import (
    BOUNDS,
    CHOICES,
    COMPONENT_SETTINGS,
    NAMESPACES,
    check_settings,
    in_namespaces,
    our_names,
)
from settings.env import apply_environment, environment_name, values_of
from settings.renamed import RENAMED_SETTINGS, RENAMED_VARIABLES
from tests.support.commands import newsharvest

ROOT = Path(__file__).resolve().parent.parent
PROFILE = "profile module settings.local"


def profile_settings(**cmdline: Any) -> Settings:
    """What `scrapy crawl` holds once `-s` is applied: the local profile, then `cmdline`."""
    from settings import local

    settings = Settings()
    settings.setmodule(local, priority="project")
    settings.set("SETTINGS_MODULE", "settings.local", priority="project")
    settings.setdict(cmdline, priority="cmdline")
    return settings


def findings(settings: Settings, environ: dict[str, str] | None = None) -> tuple[list, list]:
    report = check_settings(settings, environ or {}, value_checks=VALUE_CHECKS)
    return report.errors, report.warnings


def scrapy_defaults() -> set[str]:
    """Scrapy's own setting names, read from its file (tests/conftest.py adds ours to the
    module, for crawlers built in tests)."""
    spec = importlib.util.find_spec("scrapy.settings.default_settings")
    assert spec and spec.origin
    tree = ast.parse(Path(spec.origin).read_text())
    return {
        target.id
        for node in tree.body
        if isinstance(node, ast.Assign | ast.AnnAssign)
        for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
        if isinstance(target, ast.Name) and target.id.isupper()
    }


# --- names ---------------------------------------------------------------------------------


def test_the_shipped_profiles_and_their_environment_pass_without_a_finding() -> None:
    assert findings(profile_settings()) == ([], [])
    for name in ("settings.distributed", "settings.fixture"):
        settings = Settings()
        settings.setmodule(name, priority="project")
        assert findings(settings) == ([], []), name
    environ = {environment_name("DEDUP_THRESHOLD"): "0.7", "NEWSHARVEST_FEEDS": "feeds.txt"}
    assert findings(profile_settings(), environ) == ([], [])


@pytest.mark.parametrize(
    ("name", "closest"),
    [
        ("HARVEST_JOURNAL_PAHT", "HARVEST_JOURNAL_PATH"),
        ("DEDUP_TRESHOLD", "DEDUP_THRESHOLD"),
        ("SINK_SQLITE_ENABLE", "SINK_SQLITE_ENABLED"),
        ("REDIS_ULR", "REDIS_URL"),
        ("FEED_EXPORT_ENCODNG", "FEED_EXPORT_ENCODING"),  # Scrapy's, in a namespace of ours
        ("ARTICLE_LANGUAGE", "ARTICLE_LANGUAGES"),  # a typo of the harvest filter
        ("ARTICLE_FOOBAR", None),  # nothing close in a namespace
    ],
)
def test_an_unknown_name_in_our_namespaces_is_one_line_with_its_source_and_closest_names(
    name: str, closest: str | None
) -> None:
    errors, _ = findings(profile_settings(**{name: "x"}))
    assert len(errors) == 1 and "\n" not in errors[0]
    assert errors[0].startswith(f"unknown setting {name} (from -s); ")
    if closest:
        assert f"closest: {closest}" in errors[0]
    else:
        assert "no known setting is close" in errors[0]


def test_an_unknown_variable_names_itself_and_the_closest_variables() -> None:
    errors, _ = findings(profile_settings(), {"NEWSHARVEST_REDIS_ULR": "redis://x"})
    assert errors == [
        "unknown setting REDIS_ULR (from environment variable NEWSHARVEST_REDIS_ULR); "
        "closest: NEWSHARVEST_REDIS_URL"
    ]


def test_an_unknown_name_in_a_profile_module_names_the_module() -> None:
    settings = profile_settings()
    settings.set("HARVEST_TICKS_SECONDS", 2.0, priority="project")  # as a profile would
    errors, _ = findings(settings)
    assert errors == [
        f"unknown setting HARVEST_TICKS_SECONDS (from {PROFILE}); closest: HARVEST_TICK_SECONDS"
    ]


@pytest.mark.parametrize(
    "name",
    ["FEEDS", "FEED_EXPORT_ENCODING", "FEED_URI", "FEED_FORMAT", "FEED_EXPORT_INDENT",
     "FEED_STORE_EMPTY", "SCHEDULER_DEBUG", "SCHEDULER_PRIORITY_QUEUE", "DUPEFILTER_DEBUG",
     "DUPEFILTER_CLASS", "SCHEDULER_PERSIST", "SCHEDULER_FLUSH_ON_START", "SCHEDULER_SERIALIZER",
     "LOG_FILE", "MY_OWN_COMPONENT_SETTING"],
)  # fmt: skip
def test_scrapys_settings_scrapy_redis_ones_we_read_and_names_outside_ours_pass(
    name: str,
) -> None:
    value = {"out.jsonl": {"format": "jsonlines"}} if name == "FEEDS" else "1"
    assert findings(profile_settings(**{name: value})) == ([], [])


def test_scrapy_redis_settings_pass_only_while_one_of_its_components_is_configured() -> None:
    errors, _ = findings(profile_settings(REDIS_HOST="redis1", REDIS_ITEMS_KEY="items"))
    assert len(errors) == 2 and all("newsharvest connects to Redis with REDIS_URL" in e
                                    for e in errors)  # fmt: skip
    assert errors[0].startswith("REDIS_HOST (from -s) is read only by scrapy_redis.")
    with_pipeline = profile_settings(REDIS_HOST="redis1", REDIS_ITEMS_KEY="items")
    pipelines = {**with_pipeline.getdict("ITEM_PIPELINES"),
                 "scrapy_redis.pipelines.RedisPipeline": 800}  # fmt: skip
    with_pipeline.set("ITEM_PIPELINES", pipelines, priority="cmdline")
    assert findings(with_pipeline) == ([], [])


def test_our_namespaces_cover_every_name_settings_base_defines() -> None:
    scrapys = scrapy_defaults()
    ours = {name for name in values_of(base) if name not in scrapys}
    prefixes = {name.split("_")[0] + "_" for name in ours}
    assert prefixes <= set(NAMESPACES), prefixes - set(NAMESPACES)
    assert all(in_namespaces(name) for name in ours)


def settings_read_in(root: Path) -> set[str]:
    """Names a package reads from settings: settings.get*("NAME") and settings["NAME"]."""
    pattern = re.compile(r'settings(?:\.get\w*\(|\[)\s*"([A-Z][A-Z0-9_]+)"')
    return {name for path in root.rglob("*.py") for name in pattern.findall(path.read_text())}


@pytest.mark.parametrize("package", ["crawler", "pipelines", "scrapy", "scrapy_redis"])
def test_every_name_in_our_namespaces_that_code_reads_is_known(package: str) -> None:
    """A name read by our code, Scrapy or scrapy-redis is known (or, for scrapy-redis, known
    while its component is configured): the check can never refuse a name something reads."""
    spec = importlib.util.find_spec(package)
    assert spec and spec.submodule_search_locations
    read = settings_read_in(Path(next(iter(spec.submodule_search_locations))))
    if package == "scrapy_redis":  # but its RedisSpider's: a spider class of one's own, which
        read -= {"REDIS_START_URLS_KEY", "REDIS_START_URLS_AS_SET", "REDIS_START_URLS_AS_ZSET"}
    known = our_names() | scrapy_defaults() | {n for ns in COMPONENT_SETTINGS.values() for n in ns}
    assert {name for name in read if in_namespaces(name)} - known == set()


# --- renames -------------------------------------------------------------------------------


@pytest.mark.parametrize("renamed", RENAMED_SETTINGS, ids=lambda r: r.old)
def test_an_old_setting_name_sets_the_new_one_with_one_warning(renamed: Any) -> None:
    default = getattr(base, renamed.new)
    value = str(default * 2) if isinstance(default, float) else "/tmp/x"
    settings = profile_settings(**{renamed.old: value})
    errors, warnings = findings(settings)
    assert errors == []
    assert warnings == [f"{renamed.old} (from -s) is deprecated since {renamed.since} and stops "
                        f"working in {renamed.removed_in}: use {renamed.new}"]  # fmt: skip
    assert settings[renamed.new] == value and renamed.old not in settings
    assert settings.getpriority(renamed.new) == SETTINGS_PRIORITIES["cmdline"]


def test_an_old_name_in_a_profile_module_of_ones_own_sets_the_new_one(tmp_path: Path) -> None:
    """`from settings.local import *` then `HARVEST_JOURNAL = ...`: a deployment's own profile."""
    (tmp_path / "myprofile.py").write_text(
        "from settings.local import *  # noqa: F403\nHARVEST_JOURNAL = 'out/articles.jsonl'\n"
    )
    code = (
        "import json, sys; from scrapy.utils.project import get_project_settings\n"
        "from settings.check import check_settings\n"
        "s = get_project_settings(); report = check_settings(s)\n"
        "print(json.dumps([report.errors, report.warnings, s['HARVEST_JOURNAL_PATH']]))\n"
    )
    env = {**os.environ, "SCRAPY_SETTINGS_MODULE": "myprofile", "PYTHONPATH": str(tmp_path)}
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env,
                            capture_output=True, text=True, check=False)  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    assert json.loads(result.stdout) == [
        [],
        ["HARVEST_JOURNAL (from profile module myprofile) is deprecated since 0.2.0 and stops "
         "working in 0.4.0: use HARVEST_JOURNAL_PATH"],
        "out/articles.jsonl",
    ]  # fmt: skip


def test_a_new_name_set_beside_the_old_one_wins() -> None:
    settings = profile_settings(HARVEST_JOURNAL="old.jsonl", HARVEST_JOURNAL_PATH="new.jsonl")
    _, warnings = findings(settings)
    assert settings["HARVEST_JOURNAL_PATH"] == "new.jsonl"
    assert warnings[0].endswith(
        "use HARVEST_JOURNAL_PATH (HARVEST_JOURNAL_PATH is set too, and wins)"
    )


@pytest.mark.parametrize("renamed", RENAMED_VARIABLES, ids=lambda r: r.old)
def test_an_old_environment_variable_sets_the_new_setting_with_one_warning(renamed: Any) -> None:
    namespace = {name: value for name, value in values_of(base).items()}
    text = "9411" if renamed.new.endswith("_PORT") else "redis://h:6379/3"
    overridden = apply_environment(namespace, {renamed.old: text})
    assert namespace[renamed.new] == (9411 if renamed.new.endswith("_PORT") else text)
    if renamed.enables:  # the old port variable was the switch too
        assert namespace[renamed.enables] is True and set(overridden) == {
            renamed.new,
            renamed.enables,
        }
    _, warnings = findings(profile_settings(), {renamed.old: text})
    assert warnings == [f"environment variable {renamed.old} is deprecated since {renamed.since} "
                        f"and stops working in {renamed.removed_in}: use "
                        f"{environment_name(renamed.new)}"]  # fmt: skip


def test_the_old_prometheus_port_variable_empty_or_off_keeps_the_endpoint_off() -> None:
    for text in ("", "off"):
        namespace = values_of(base)
        assert apply_environment(namespace, {"NEWSHARVEST_PROMETHEUS_PORT": text}) == {}
        assert namespace["MONITOR_PROMETHEUS_ENABLED"] is False


def test_a_new_variable_wins_over_its_old_name() -> None:
    namespace = values_of(base)
    environ = {"REDIS_URL": "redis://old:6379/0", "NEWSHARVEST_REDIS_URL": "redis://new:6379/0"}
    apply_environment(namespace, environ)
    assert namespace["REDIS_URL"] == "redis://new:6379/0"
    _, warnings = findings(profile_settings(), environ)
    assert warnings[0].endswith("(NEWSHARVEST_REDIS_URL is set too, and wins)")


def test_every_rename_is_past_its_period_only_after_the_current_version() -> None:
    version = Version(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"])
    for renamed in (*RENAMED_SETTINGS, *RENAMED_VARIABLES):
        assert Version(renamed.since) <= version < Version(renamed.removed_in), renamed
        assert renamed.new in our_names(), renamed


def test_the_renames_are_the_ones_git_history_shows_and_upgrading_md_lists_them() -> None:
    page = (ROOT / "docs" / "upgrading.md").read_text()
    for renamed in RENAMED_SETTINGS:
        assert f"| `{renamed.old}` | `{renamed.new}` |" in page, renamed
    for renamed in RENAMED_VARIABLES:
        assert f"| `{renamed.old}` | `{environment_name(renamed.new)}` |" in page, renamed
    old_names = {renamed.old for renamed in RENAMED_SETTINGS}
    assert not old_names & our_names()  # an old name is never also a current one


# --- values --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "value", "problem"),
    [
        ("DEDUP_THRESHOLD", "1.5", "must be at least 0.3 and at most 0.98"),
        ("DEDUP_THRESHOLD", "high", "expected a number"),
        ("DEDUP_ENABLED", "maybe", "expected 1/0 or true/false"),
        ("OUTPUT_MARKDOWN", "maybe", "expected 1/0 or true/false"),
        ("NOTICES_MIN_SHARE", "-0.1", "must be at least 0 and at most 1"),
        ("HARVEST_JITTER", "1", "must be at least 0 and below 1"),
        ("MONITOR_PROMETHEUS_PORT", "70000", "must be at least 0 and at most 65535"),
        ("SINK_BATCH_SECONDS", "-1", "must be at least 0"),
        ("WARC_ROTATE_BYTES", "-5", "must be at least 0"),
        ("SINK_BATCH_SIZE", "0", "must be at least 1"),
        ("HARVEST_MAX_VERSIONS", "2.5", "expected a whole number"),
        ("EXTRACT_WORKER_NICENESS", "20", "must be at least 0 and at most 19"),
        ("HARVEST_STATE", "disk", "must be one of '', 'memory'"),
        ("SINK_START_POLICY", "retry", "must be one of 'fail', 'journal'"),
        ("REPLAY_READER", "warc", "must be one of 'fastwarc', 'warcio'"),
        ("EXTRACT_EXTRACTOR", "boilerpipe:depth", "boilerpipe takes no parameter (got 'depth')"),
        ("EXTRACT_EXTRACTOR", "cetr+", "malformed extractor name 'cetr+'"),
        ("EXTRACT_EXTRACTOR", "cetr+boilerpipe", None),
        ("NETWORK_ALLOWLIST", "{", None),  # a list from -s is comma-separated: anything goes
    ],
)
def test_a_value_out_of_its_type_or_range_is_one_line(
    name: str, value: str, problem: str | None
) -> None:
    errors, _ = findings(profile_settings(**{name: value}))
    if problem is None:
        assert errors == []
    else:
        assert errors == [f"{name}={value!r} (from -s): {problem}"]


def test_values_inside_their_ranges_pass_and_the_words_are_read_as_the_code_reads_them() -> None:
    good = {"DEDUP_THRESHOLD": "0.9", "HARVEST_STATE": " Memory ", "HARVEST_JITTER": "0",
            "MONITOR_PROMETHEUS_PORT": "0", "EXTRACT_WORKERS": "-1", "DEDUP_ENABLED": "false",
            "NETWORK_ALLOWLIST": "wiki,10.0.0.0/8",
            "HARVEST_CLAIM_LEASE_SECONDS": "60"}  # fmt: skip
    assert findings(profile_settings(**good)) == ([], [])


def test_a_minimum_above_its_maximum_is_one_line() -> None:
    errors, _ = findings(profile_settings(HARVEST_MIN_INTERVAL_SECONDS="7200"))
    assert errors == [
        "HARVEST_MIN_INTERVAL_SECONDS=7200 (from -s) is larger than "
        f"HARVEST_MAX_INTERVAL_SECONDS=3600 (from {PROFILE})"
    ]


def test_an_environment_value_that_does_not_parse_is_one_line_naming_the_variable() -> None:
    namespace = values_of(base)
    environ = {"NEWSHARVEST_DEDUP_THRESHOLD": "high"}
    apply_environment(namespace, environ)  # keeps the text, notes why
    assert namespace["DEDUP_THRESHOLD"] == "high"
    settings = profile_settings()
    settings.set("DEDUP_THRESHOLD", "high", priority="project")
    errors, _ = findings(settings, environ)
    assert errors == ["DEDUP_THRESHOLD='high' (from environment variable "
                      "NEWSHARVEST_DEDUP_THRESHOLD): expected a number"]  # fmt: skip


def test_the_rules_agree_with_the_ranges_the_components_hold() -> None:
    from crawler.warc.records import READERS
    from pipelines.extraction.workers import AUTO_WORKERS, MAX_NICENESS
    from pipelines.fingerprints import THRESHOLD_RANGE
    from pipelines.sinks.base import START_POLICIES

    assert (BOUNDS["DEDUP_THRESHOLD"].low, BOUNDS["DEDUP_THRESHOLD"].high) == THRESHOLD_RANGE
    assert BOUNDS["EXTRACT_WORKER_NICENESS"].high == MAX_NICENESS
    assert BOUNDS["EXTRACT_WORKERS"].low == AUTO_WORKERS
    assert CHOICES["SINK_START_POLICY"] == START_POLICIES
    assert CHOICES["REPLAY_READER"] == READERS


# --- through the commands users run --------------------------------------------------------


@pytest.fixture(scope="module")
def room() -> Newsroom:
    return Newsroom(seed=1, n_domains=2, articles_per_domain=4)


def run_crawl(room: Newsroom, workdir: Path, *settings: str, env: dict[str, str] | None = None,
              **variables: str) -> subprocess.CompletedProcess[str]:  # fmt: skip
    """`scrapy crawl feeds` against the simulator, as a user runs it, in `workdir`."""
    workdir.mkdir(exist_ok=True)
    environment = env or crawl_env(workdir / "state")
    environment.update(variables)
    with NewsroomServer(room, port=0) as server:
        return subprocess.run(
            crawl_command(room.feed_urls, server.proxy_url, settings), cwd=workdir,
            env=environment, capture_output=True, text=True, timeout=CRAWL_TIMEOUT_SECONDS,
            check=False,
        )  # fmt: skip


def only_line(stderr: str) -> str:
    assert "Traceback" not in stderr and stderr.count("\n") == 1, stderr[-3000:]
    return stderr.strip()


@pytest.mark.slow
@pytest.mark.parametrize(
    ("settings", "variables", "line"),
    [
        (["HARVEST_JOURNAL_PAHT=x.jsonl"], {},
         "unknown setting HARVEST_JOURNAL_PAHT (from -s); closest: HARVEST_JOURNAL_PATH"),
        ([], {"NEWSHARVEST_REDIS_ULR": "redis://127.0.0.1:6379/15"},
         "unknown setting REDIS_ULR (from environment variable NEWSHARVEST_REDIS_ULR); "
         "closest: NEWSHARVEST_REDIS_URL"),
        (["DEDUP_THRESHOLD=1.2"], {},
         "DEDUP_THRESHOLD='1.2' (from -s): must be at least 0.3 and at most 0.98"),
    ],
    ids=["mistyped setting", "mistyped variable", "value out of range"],
)  # fmt: skip
def test_scrapy_crawl_with_a_bad_setting_exits_2_with_one_line_before_anything_starts(
    room: Newsroom, tmp_path: Path, settings: list[str], variables: dict[str, str], line: str
) -> None:
    result = run_crawl(room, tmp_path, *settings, **variables)
    assert result.returncode == 2 and result.stdout == ""
    assert only_line(result.stderr) == f"scrapy crawl: error: {line}"
    assert not (tmp_path / "x.jsonl").exists() and not (tmp_path / "state").exists()


@pytest.mark.slow
def test_scrapy_crawl_with_old_names_runs_as_the_new_ones_with_one_warning_each(
    room: Newsroom, tmp_path: Path, redis_url: str, redis_prefix: str
) -> None:
    """`-s HARVEST_JOURNAL=...`, NEWSHARVEST_INDEX and a plain REDIS_URL: the journal and the
    index are written where the old names say, the shared state goes to that Redis."""
    journal, index = tmp_path / "journal.jsonl", tmp_path / "old-index.sqlite3"
    env = crawl_env(tmp_path / "state")
    del env["NEWSHARVEST_SINK_SQLITE_PATH"], env["NEWSHARVEST_REDIS_URL"]
    result = run_crawl(room, tmp_path, f"HARVEST_JOURNAL={journal}",
                       f"REDIS_KEY_PREFIX={redis_prefix}",
                       env=env, NEWSHARVEST_INDEX=str(index), REDIS_URL=redis_url)  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    warnings = [line for line in result.stderr.splitlines() if "deprecated" in line]
    assert warnings == [
        "scrapy crawl: warning: HARVEST_JOURNAL (from -s) is deprecated since 0.2.0 and stops "
        "working in 0.4.0: use HARVEST_JOURNAL_PATH",
        "scrapy crawl: warning: environment variable NEWSHARVEST_INDEX is deprecated since 0.2.0 "
        "and stops working in 0.4.0: use NEWSHARVEST_SINK_SQLITE_PATH",
        "scrapy crawl: warning: environment variable REDIS_URL is deprecated since 0.2.0 and "
        "stops working in 0.4.0: use NEWSHARVEST_REDIS_URL",
    ], result.stderr[-3000:]
    written = [json.loads(line) for line in journal.read_text().splitlines()]
    articles = [item for item in written if item.get("text")]
    assert articles and len(written) <= len(room.articles())
    with sqlite3.connect(index) as connection:
        assert connection.execute("SELECT count(*) FROM articles").fetchone()[0] > 0
    client = redis.Redis.from_url(redis_url)
    assert list(client.scan_iter(f"{redis_prefix}:*", count=1000)), "nothing in Redis"
    client.close()


@pytest.mark.slow
def test_newsharvest_commands_check_their_settings_too(tmp_path: Path) -> None:
    typo = newsharvest(
        "monitor", "--print", cwd=tmp_path, env={"NEWSHARVEST_HARVEST_STATE": "disk"}
    )
    assert typo.returncode == 2 and typo.stdout == ""
    assert only_line(typo.stderr) == (
        "newsharvest monitor: error: HARVEST_STATE='disk' (from environment variable "
        "NEWSHARVEST_HARVEST_STATE): must be one of '', 'memory'"
    )
    replay = newsharvest("replay", "--set", "REPLAY_READR=warcio", "x.warc.gz", cwd=tmp_path)
    assert replay.returncode == 2
    assert only_line(replay.stderr) == (
        "newsharvest replay: error: unknown setting REPLAY_READR (from --set); "
        "closest: REPLAY_READER"
    )
