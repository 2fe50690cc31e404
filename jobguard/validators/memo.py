"""A least-recently-used memo bounded by the bytes of its keys, not by its number of entries.

Index strings (completedIndexes, failedIndexes: `intervals`) and Job specs (`pipeline`) come
from clients: bounded by entries, a cache of 4,096 entries retains 4 GiB when every key is
1 MiB. Here each entry is charged the size of its key, so distinct large keys evict old entries
instead of growing the process, and a key larger than the whole budget is computed without
being kept. (Label and annotation keys and values are checked by `lru_cache`s that take only
strings short enough to be valid: `rules.metadata`.)
"""

from __future__ import annotations

import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

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
