"""A least-recently-used memo bounded by the bytes of its keys, not by its number of entries.

Index strings (completedIndexes, failedIndexes: `intervals`) and Job specs (`pipeline`) come
from clients: bounded by entries, a cache of 4,096 entries retains 4 GiB when every key is
1 MiB. Here each entry is charged the size of its key, so distinct large keys evict old entries
instead of growing the process, and a key larger than the whole budget is computed without
being kept. The checks of short strings (names, label values, quantities, schedules) are kept
by `ShortKeyCache`: an `lru_cache` that takes only keys short enough to be valid.
"""

from __future__ import annotations

import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from functools import lru_cache
from typing import Any, Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

_ENTRY_OVERHEAD = 100
"""Bytes charged per entry on top of the key: the dict slot, the tuple, the value's reference."""


def _key_bytes(key: object) -> int:
    if isinstance(key, tuple):
        return sum(map(sys.getsizeof, key))
    return sys.getsizeof(key)


class ByteBoundedMemo(Generic[K, V]):
    """`memo(key)` computes `function(key)` once while the key stays among the recent ones.

    `value_bytes`, when given, says what a value holds beyond its key (charged likewise).
    Thread-safe (the webhook may judge large requests in a worker thread): hits take no lock,
    insertions and evictions do.
    """

    def __init__(
        self,
        function: Callable[[K], V],
        max_bytes: int,
        value_bytes: Callable[[V], int] | None = None,
    ) -> None:
        self._function = function
        self.max_bytes = max_bytes
        self._value_bytes = value_bytes
        self._entries: OrderedDict[K, tuple[V, int]] = OrderedDict()
        self._lock = threading.Lock()
        self.bytes = 0
        """Bytes charged for the entries held now (at most `max_bytes`)."""

    def __call__(self, key: K) -> V:
        return self.get_or_compute(key, self._function)

    def peek(self, key: K) -> tuple[V] | None:
        """The value held for `key` (in a 1-tuple), without computing or reordering."""
        hit = self._entries.get(key)
        return None if hit is None else (hit[0],)

    def get_or_compute(self, key: K, compute: Callable[[K], V]) -> V:
        """The value held for `key`, else `compute(key)` (which must give what the memo's own
        function would: a faster way to the same value), kept."""
        hit = self._entries.get(key)
        if hit is not None:
            # Not contextlib.suppress: a context manager costs more than the lookup itself.
            try:  # noqa: SIM105
                self._entries.move_to_end(key)
            except KeyError:  # evicted meanwhile by another thread
                pass
            return hit[0]
        value = compute(key)
        cost = _key_bytes(key) + _ENTRY_OVERHEAD
        if self._value_bytes is not None:
            cost += self._value_bytes(value)
        if cost > self.max_bytes:
            return value
        with self._lock:
            if key not in self._entries:
                self._entries[key] = (value, cost)
                self.bytes += cost
                while self.bytes > self.max_bytes:
                    _, (_, evicted) = self._entries.popitem(last=False)
                    self.bytes -= evicted
        return value

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self.bytes = 0


class ShortKeyCache(Generic[K, V]):
    """`functools.lru_cache` of at most `maxsize` entries for keys whose `size` is at most
    `max_size`; larger keys are computed without being kept. The cache then holds at most
    `maxsize` keys of bounded size (and the values made from them): bounded by bytes, with the
    C cache's speed on the short strings that repeat from request to request (names, label
    values, quantities, schedules), where a client's distinct 1 MiB strings once grew the
    process by 1 MiB each."""

    def __init__(
        self, function: Callable[[K], V], maxsize: int, max_size: int, size: Callable[[K], int]
    ) -> None:
        self._function = function
        self._cached = lru_cache(maxsize=maxsize)(function)
        self._max_size = max_size
        self._size = size
        self.__doc__ = function.__doc__
        self.__wrapped__ = function

    def __call__(self, key: K) -> V:
        if self._size(key) <= self._max_size:
            return self._cached(key)
        return self._function(key)

    def cache_info(self) -> Any:
        return self._cached.cache_info()

    def cache_clear(self) -> None:
        self._cached.cache_clear()


def short_key_cache(
    maxsize: int, max_size: int, size: Callable[[Any], int] = len
) -> Callable[[Callable[[K], V]], ShortKeyCache[K, V]]:
    """Decorator: `ShortKeyCache` of `maxsize` entries, keys of `size` up to `max_size`."""

    def wrap(function: Callable[[K], V]) -> ShortKeyCache[K, V]:
        return ShortKeyCache(function, maxsize, max_size, size)

    return wrap
