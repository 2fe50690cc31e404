"""Giving freed memory back to the system after a large body.

A large body is decoded into millions of small objects and judged in a worker thread; once it
is answered they are freed, but glibc's allocator keeps the freed pages of its heaps (the worker
thread's arena is one of its own) for later use, so the process's resident size ratchets up
with every large body (an idle server crept from 79 to 192 MiB after a few hundred). glibc's
public `malloc_trim(0)` returns every free page of every arena; it takes a few milliseconds and
runs after large bodies only. Elsewhere (musl, macOS) there is nothing to call and nothing done.

That alone left an idle server 27-34 MiB above where it started after 20 large bodies
(`bench.bench_heap`): glibc serves an allocation over its mmap threshold (128 KiB) with a
mapping of its own, given back when freed, but raises the threshold to the size of each such
block freed (up to 32 MiB), so after the first large body the next bodies' buffers and lists
come from the heap, where they fragment it and stay resident, free. The server fixes the
threshold (`mallopt(M_MMAP_THRESHOLD)`, as `MALLOC_MMAP_THRESHOLD_` would; glibc's public API),
which also stops the adjustment: an idle server then returns to within 6 MiB of where it
started (Python's own arenas, a few kept by surviving objects), at no measured cost in time.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
from collections.abc import Callable
from typing import Any, cast

log = logging.getLogger("jobguard.server")


def _glibc(function: str, argtypes: list[Any]) -> Callable[..., int] | None:
    """A glibc function returning an int, or None where the C library has none such."""
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        found = getattr(ctypes.CDLL(name), function)
    except (OSError, AttributeError):  # not glibc
        return None
    found.argtypes = argtypes
    found.restype = ctypes.c_int
    return cast(Callable[..., int], found)


_TRIM = _glibc("malloc_trim", [ctypes.c_size_t])

M_MMAP_THRESHOLD = -3
"""glibc's mallopt parameter (malloc.h)."""
MMAP_THRESHOLD = 128 * 1024
"""glibc's default threshold, kept from being raised."""


def map_large_blocks() -> bool:
    """Serve every allocation over MMAP_THRESHOLD with a mapping of its own (given back when
    freed), whatever was freed before; False where glibc's mallopt is not there."""
    mallopt = _glibc("mallopt", [ctypes.c_int, ctypes.c_int])
    return mallopt is not None and bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD))


def give_back() -> bool:
    """Return the allocator's free pages to the system; False where there is no way to."""
    if _TRIM is None:
        return False
    _TRIM(0)
    return True
