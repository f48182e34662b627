"""Downloader middlewares."""

from __future__ import annotations

from scrapy import Request
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured


class StaticProxyMiddleware:
    """Send every request through PROXY_URL (the local fixture serves all its publisher
    domains behind one loopback port). Off when the setting is empty."""

    def __init__(self, proxy: str) -> None:
        self.proxy = proxy

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> StaticProxyMiddleware:
        proxy = crawler.settings.get("PROXY_URL")
        if not proxy:
            raise NotConfigured("PROXY_URL is empty")
        return cls(proxy)

    def process_request(self, request: Request) -> None:
        request.meta.setdefault("proxy", self.proxy)
