"""Helpers that only tests use (the product never imports tests/)."""
