"""Caches of client-chosen strings: bounded by the bytes they keep, owned by a configuration.

Index strings (completedIndexes, failedIndexes: `intervals`), Job specs (`pipeline`), names,
label values, quantities and schedules come from clients: bounded by entries, a cache of 4,096
entries retains 4 GiB when every key is 1 MiB. `ByteBoundedMemo` charges each entry the size of
its key (and of its value), so distinct large keys evict old entries instead of growing the
process, and a key larger than the whole budget is computed without being kept.
`ShortKeyCache` keeps the checks of short strings in C (`functools.lru_cache`) and takes only
keys short enough to be valid: its number of entries is its byte budget over the largest an
entry can be.

Every cache here belongs to a `Caches`, and each `Settings` makes its own: a configuration
reload (new settings) drops the caches of the old configuration with it. The rule library's
entry points (`pipeline.evaluate`, `pipeline.mutate`) make their settings' caches the active
ones for the request (`ACTIVE_CACHES`, a context variable: threads and tasks judging under
other settings do not mix); a cached function called with no active caches computes without
keeping anything.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from contextvars import ContextVar
from functools import lru_cache
from typing import Any, Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

MiB = 1024 * 1024

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


class Caches:
    """The caches of one configuration (one `Settings`), made empty with it and dropped with
    it. Each cache is made on first use, bounded by its own byte budget; `max_bytes` is the
    sum of the budgets of those made so far."""

    __slots__ = ("__weakref__", "_lock", "by_owner")

    def __init__(self) -> None:
        self.by_owner: dict[object, Any] = {}
        self._lock = threading.Lock()

    def get(self, owner: object, make: Callable[[], Any]) -> Any:
        """`owner`'s cache, made by `make()` on first use."""
        cache = self.by_owner.get(owner)
        if cache is None:
            with self._lock:
                cache = self.by_owner.get(owner)
                if cache is None:
                    cache = self.by_owner[owner] = make()
        return cache

    def find(self, owner: object) -> Any:
        """`owner`'s cache if it was made, else None."""
        return self.by_owner.get(owner)

    @property
    def max_bytes(self) -> int:
        return sum(cache.max_bytes for cache in list(self.by_owner.values()))

    def __len__(self) -> int:
        return len(self.by_owner)

    def __reduce__(self) -> tuple[type[Caches], tuple[()]]:
        # Settings travel to `check`'s worker processes: each starts with empty caches.
        return (Caches, ())

    def __repr__(self) -> str:
        return f"Caches({len(self.by_owner)} made, at most {self.max_bytes} bytes)"


ACTIVE_CACHES: ContextVar[Caches | None] = ContextVar("jobguard_caches", default=None)
"""The caches the cached functions use now: the rule library's entry points set and reset it
directly (`caching` is the same as a context manager, for callers off the hot path)."""


@contextlib.contextmanager
def caching(caches: Caches | None) -> Iterator[None]:
    """Within this block the cached functions keep their results in `caches` (none: kept
    nowhere)."""
    token = ACTIVE_CACHES.set(caches)
    try:
        yield
    finally:
        ACTIVE_CACHES.reset(token)


class OwnedMemo(Generic[K, V]):
    """A `ByteBoundedMemo` per `Caches`: calls resolve the active caches' memo (made on first
    use, of `max_bytes`); with no active caches the value is computed and not kept."""

    def __init__(
        self,
        function: Callable[[K], V],
        max_bytes: int,
        value_bytes: Callable[[V], int] | None = None,
    ) -> None:
        self._function = function
        self.max_bytes = max_bytes
        self._value_bytes = value_bytes

    def _make(self) -> ByteBoundedMemo[K, V]:
        return ByteBoundedMemo(self._function, self.max_bytes, self._value_bytes)

    def memo(self, caches: Caches | None = None) -> ByteBoundedMemo[K, V] | None:
        """The memo of `caches` (default: the active ones), None when there are none."""
        caches = caches if caches is not None else ACTIVE_CACHES.get()
        return None if caches is None else caches.get(self, self._make)

    def __call__(self, key: K) -> V:
        memo = self.memo()
        return self._function(key) if memo is None else memo(key)

    def get_or_compute(self, key: K, compute: Callable[[K], V]) -> V:
        memo = self.memo()
        return compute(key) if memo is None else memo.get_or_compute(key, compute)

    def peek(self, key: K) -> tuple[V] | None:
        memo = self.memo()
        return None if memo is None else memo.peek(key)


_LRU_ENTRY = 150
"""Bytes of one `lru_cache` entry beyond its key and value: its link, the dict slot, the
hashed key."""


class ShortKeyCache(Generic[K, V]):
    """`functools.lru_cache`, per `Caches`, for keys whose `size` is at most `max_size`; larger
    keys are computed without being kept. Its entries are counted so that the cache stays
    within `max_bytes` even when every key and value is the largest it can be
    (`entry_bytes`): bounded by bytes, with the C cache's speed on the short strings that
    repeat from request to request (names, label values, quantities, schedules), where a
    client's distinct 1 MiB strings once grew the process by 1 MiB each."""

    def __init__(
        self,
        function: Callable[[K], V],
        max_bytes: int,
        max_size: int,
        size: Callable[[K], int],
        entry_bytes: int,
    ) -> None:
        self._function = function
        self.max_bytes = max_bytes
        self.entry_bytes = entry_bytes
        self.maxsize = max(1, max_bytes // entry_bytes)
        self._max_size = max_size
        self._size = size
        self.__doc__ = function.__doc__
        self.__name__ = function.__name__
        self.__wrapped__ = function

    def _make(self) -> Any:
        cached = lru_cache(maxsize=self.maxsize)(self._function)
        cached.max_bytes = self.max_bytes  # type: ignore[attr-defined]  # for Caches.max_bytes
        return cached

    def __call__(self, key: K) -> V:
        if self._size(key) <= self._max_size:
            caches = ACTIVE_CACHES.get()
            if caches is not None:
                # The lookup inlined: this runs dozens of times a request.
                try:
                    cached = caches.by_owner[self]
                except KeyError:
                    cached = caches.get(self, self._make)
                result: V = cached(key)
                return result
        return self._function(key)

    def cache_info(self, caches: Caches | None = None) -> Any:
        """`functools.lru_cache`'s figures in `caches` (default: the active ones), or None."""
        caches = caches if caches is not None else ACTIVE_CACHES.get()
        cached = None if caches is None else caches.find(self)
        return None if cached is None else cached.cache_info()


def _str_bytes(max_len: int) -> int:
    """The most a str of `max_len` characters can take (4 bytes a character beyond the BMP)."""
    return sys.getsizeof("\U0001f600" * max_len)


def short_key_cache(
    max_bytes: int,
    max_size: int,
    size: Callable[[Any], int] = len,
    entry_bytes: int | None = None,
) -> Callable[[Callable[[K], V]], ShortKeyCache[K, V]]:
    """Decorator: `ShortKeyCache` of `max_bytes`, for keys of `size` up to `max_size`.
    `entry_bytes`, the most an entry takes, defaults to a str key of `max_size` characters
    and a value that quotes it (an error message naming the value)."""
    entry = entry_bytes if entry_bytes is not None else 2 * _str_bytes(max_size) + 200
    entry += _LRU_ENTRY

    def wrap(function: Callable[[K], V]) -> ShortKeyCache[K, V]:
        return ShortKeyCache(function, max_bytes, max_size, size, entry)

    return wrap
