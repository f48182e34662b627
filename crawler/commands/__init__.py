"""Scrapy commands of this project (COMMANDS_MODULE): `crawl` with a meaningful exit status."""
