"""Giving freed memory back to the system after a large body.

A large body is decoded into millions of small objects and judged in a worker thread; once it
is answered they are freed, but glibc's allocator keeps the freed pages of its heaps (the worker
thread's arena is one of its own) for later use, so the process's resident size ratchets up
with every large body (an idle server crept from 79 to 192 MiB after a few hundred). glibc's
public `malloc_trim(0)` returns every free page of every arena; it takes a few milliseconds and
runs after large bodies only. Elsewhere (musl, macOS) there is nothing to call and nothing done.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
from collections.abc import Callable

log = logging.getLogger("jobguard.server")


def _malloc_trim() -> Callable[[int], int] | None:
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        libc = ctypes.CDLL(name)
        trim = libc.malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim


_TRIM = _malloc_trim()


def give_back() -> bool:
    """Return the allocator's free pages to the system; False where there is no way to."""
    if _TRIM is None:
        return False
    _TRIM(0)
    return True
