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
    assert "pip install" in crawler["build"]["dockerfile_inline"]
    assert "scrapy crawl feeds" in " ".join(crawler["command"])
    assert crawler["environment"]["REDIS_URL"].startswith("redis://redis:")
    assert crawler["depends_on"]["redis"]["condition"] == "service_healthy"
    assert "newsharvest" in services["demo"]["command"]


def test_profiles_import_and_keep_politeness_on() -> None:
    for name in ("settings.base", "settings.local", "settings.fixture"):
        profile = importlib.import_module(name)
        assert profile.ROBOTSTXT_OBEY is True
        assert profile.AUTOTHROTTLE_ENABLED is True
        assert profile.SPIDER_MODULES == ["crawler.spiders"]
        assert "pipelines.extract.ExtractionPipeline" in profile.ITEM_PIPELINES


def test_scrapy_cfg_defaults_to_the_local_profile() -> None:
    assert "default = settings.local" in (ROOT / "scrapy.cfg").read_text()
