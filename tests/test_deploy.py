"""What users deploy with: docker-compose.yml, scrapy.cfg and the settings profiles."""

from __future__ import annotations

import importlib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent


def test_compose_runs_redis_and_a_crawler_built_from_the_repository() -> None:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    services = compose["services"]
    assert {"redis", "crawler"} <= set(services)
    crawler = services["crawler"]
    assert crawler["build"]["context"] == "."
    assert "pip install --no-cache-dir ." in crawler["build"]["dockerfile_inline"]
    assert "scrapy crawl feeds" in " ".join(crawler["command"])
    assert crawler["environment"]["NEWSHARVEST_REDIS_URL"].startswith("redis://redis:")
    assert crawler["depends_on"]["redis"]["condition"] == "service_healthy"
    assert "newsharvest" in services["demo"]["command"]


def test_compose_crawler_scales_out_on_the_distributed_profile() -> None:
    text = (ROOT / "docker-compose.yml").read_text()
    compose = yaml.safe_load(text)
    crawler = compose["services"]["crawler"]
    command = " ".join(crawler["command"])
    assert crawler["environment"]["SCRAPY_SETTINGS_MODULE"] == "settings.distributed"
    assert "-a continuous=1" in command
    # Each replica writes its own crash-safe journal: no two containers share a file.
    assert "HARVEST_JOURNAL_PATH=" in command and "$${HOSTNAME}" in command
    # Nothing that pins one replica: `--scale crawler=N` needs no fixed name or host port.
    assert "container_name" not in crawler and "ports" not in crawler
    assert "--scale crawler=4" in text
    # Redis keeps the shared state across restarts.
    redis_command = compose["services"]["redis"]["command"]
    assert (
        "--appendonly" in redis_command
        and "redis-data:/data" in compose["services"]["redis"]["volumes"]
    )


def test_profiles_import_and_keep_politeness_on() -> None:
    for name in ("settings.base", "settings.local", "settings.fixture", "settings.distributed"):
        profile = importlib.import_module(name)
        assert profile.ROBOTSTXT_OBEY is True
        assert profile.AUTOTHROTTLE_ENABLED is True
        assert profile.SPIDER_MODULES == ["crawler.spiders"]
        assert "pipelines.extraction.pipeline.ExtractionPipeline" in profile.ITEM_PIPELINES


def test_distributed_profile_shares_everything_through_redis() -> None:
    profile = importlib.import_module("settings.distributed")
    assert profile.REDIS_URL.startswith("redis://")
    assert profile.SCHEDULER == "crawler.scheduler.RedisScheduler"
    assert profile.DUPEFILTER_CLASS == "crawler.scheduler.TTLDupeFilter"
    assert profile.SCHEDULER_PERSIST is True and profile.DUPEFILTER_TTL_SECONDS > 0


def test_scrapy_cfg_defaults_to_the_local_profile() -> None:
    assert "default = settings.local" in (ROOT / "scrapy.cfg").read_text()


def test_compose_serves_the_dashboard_and_prometheus_scrapes_every_worker() -> None:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    services = compose["services"]
    environment = services["crawler"]["environment"]
    assert environment["NEWSHARVEST_MONITOR_PROMETHEUS_ENABLED"] == "1"
    port = environment["NEWSHARVEST_MONITOR_PROMETHEUS_PORT"]
    assert services["monitor"]["command"][:2] == ["newsharvest", "monitor"]
    assert services["monitor"]["environment"]["NEWSHARVEST_REDIS_URL"].startswith("redis://redis:")
    (mounted,) = services["prometheus"]["configs"]
    assert mounted["target"] == "/etc/prometheus/prometheus.yml"
    config = compose["configs"][mounted["source"]]["content"]
    prometheus = yaml.safe_load(config)  # inline, so the repository keeps its fixed top level
    discovery = prometheus["scrape_configs"][0]["dns_sd_configs"][0]
    assert discovery["names"] == ["crawler"] and str(discovery["port"]) == port


def test_compose_cluster_variant_points_every_redis_user_at_a_three_master_cluster() -> None:
    """docker-compose.cluster.yml, over docker-compose.yml: three cluster-mode masters joined
    once, and the workers, dashboard and demo on the cluster (settings that exist)."""
    from settings import base

    compose = yaml.safe_load((ROOT / "docker-compose.cluster.yml").read_text())
    services = compose["services"]
    masters = [services[f"redis-{n}"] for n in (1, 2, 3)]
    for master in masters:
        command = " ".join(master["command"])
        assert "--cluster-enabled yes" in command and "--appendonly yes" in command
    init = " ".join(services["redis-cluster-init"]["command"])
    assert "--cluster create redis-1:6379 redis-2:6379 redis-3:6379" in init
    for name in ("crawler", "monitor", "demo"):
        environment = services[name]["environment"]
        assert environment["NEWSHARVEST_REDIS_CLUSTER"] == "1"
        assert environment["NEWSHARVEST_REDIS_URL"].startswith("redis://redis-1:")
        init_done = services[name]["depends_on"]["redis-cluster-init"]["condition"]
        assert init_done == "service_completed_successfully"
        for variable in ("NEWSHARVEST_REDIS_CLUSTER", "NEWSHARVEST_DEDUP_REDIS_SHARDS"):
            assert hasattr(base, variable.removeprefix("NEWSHARVEST_")), variable
