"""Bounds of the offline commands' inputs, in a module of their own: the argument parser shows
them without importing the readers."""

from __future__ import annotations

MAX_FILE_BYTES = 32 * 1024 * 1024
"""The largest input file `check` reads (`--max-file-bytes`): reading costs about 6 bytes of
memory per byte of YAML (a 64 MB file took 365 MiB); a chart rendered whole is a few MB."""
