"""Validated JSONL I/O and adapters for public data sets."""

from toolkit.datasets.jsonl import dump_records, read_jsonl, write_jsonl

__all__ = ["read_jsonl", "write_jsonl", "dump_records"]
