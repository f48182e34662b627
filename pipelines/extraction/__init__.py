"""Extraction stage: raw HTML -> article or NULL, in worker processes (pipeline, workers)."""
