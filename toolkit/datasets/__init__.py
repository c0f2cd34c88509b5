"""Validated JSONL I/O and adapters for public data sets."""

from toolkit.datasets.jsonl import read_jsonl, write_jsonl, dump_records

__all__ = ["read_jsonl", "write_jsonl", "dump_records"]
