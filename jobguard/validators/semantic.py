"""Kubernetes semantic equality (`apiequality.Semantic.DeepEqual`) on JSON objects.

Upstream compares typed Go structs, where nil and empty lists/maps are equal, resource
quantities compare by value and timestamps as instants. A webhook sees JSON, so both sides are
normalised first: absent, null, [] and {} are dropped from maps, quantity strings become exact
decimals and RFC 3339 timestamps become instants.
"""

from __future__ import annotations

import re
from datetime import datetime
from decimal import Decimal
from typing import Any

from jobguard.validators.errors import ABSENT, FieldChange
from jobguard.validators.quantity import QuantityError, quantity_of

# Maps whose values are resource quantities, and scalar keys that hold one.
_QUANTITY_MAPS = frozenset({"requests", "limits", "overhead", "capacity", "allocatable"})
_QUANTITY_KEYS = frozenset({"sizeLimit"})
_TIMESTAMP_KEYS = frozenset({"creationTimestamp", "deletionTimestamp", "lastTransitionTime"})


def quantity_value(value: object) -> Decimal | None:
    """The exact value of a resource quantity as the API server reads it, or None when it does
    not parse (`quantity.quantity_of`: upstream ParseQuantity)."""
    try:
        return quantity_of(value).value
    except QuantityError:
        return None


def parse_time(value: str) -> datetime | None:
    """An RFC 3339 timestamp as an aware datetime, or None."""
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else None


def _is_empty(value: Any) -> bool:
    return value is None or value == [] or value == {}


def normalize(value: Any, key: str = "") -> Any:
    """A canonical form of a JSON value for semantic comparison."""
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            if _is_empty(v):
                continue
            if key in _QUANTITY_MAPS or k in _QUANTITY_KEYS:
                quantity = quantity_value(v)
                out[k] = ("quantity", quantity) if quantity is not None else normalize(v, k)
            elif k in _TIMESTAMP_KEYS and isinstance(v, str):
                instant = parse_time(v)
                out[k] = ("time", instant) if instant is not None else v
            else:
                normalized = normalize(v, k)
                if not _is_empty(normalized):
                    out[k] = normalized
        return out
    if isinstance(value, list):
        return [normalize(item, key) for item in value]
    return value


def semantic_equal(a: Any, b: Any) -> bool:
    """True when two JSON values are equal under Kubernetes semantic equality."""
    # Plain equality first: most compared values are unchanged, and == runs in C.
    if a is b or a == b:
        return True
    return bool(normalize(a) == normalize(b))


_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _child_path(path: str, key: str | int) -> str:
    # Items, and label keys and the like: `labels[app.kubernetes.io/name]`.
    if isinstance(key, int) or _PLAIN_KEY.fullmatch(key) is None:
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def field_changes(old: Any, new: Any, path: str) -> tuple[FieldChange, ...]:
    """The innermost fields that differ under semantic equality, in the new value's order:
    a map member or list item set on one side only is one change; lists of different
    lengths compare item by item, then the extra items."""
    old_unset, new_unset = old is ABSENT or _is_empty(old), new is ABSENT or _is_empty(new)
    if old_unset or new_unset:
        if old_unset and new_unset:
            return ()
        return (FieldChange(path, ABSENT if old_unset else old, ABSENT if new_unset else new),)
    if semantic_equal(old, new):
        return ()
    if isinstance(old, dict) and isinstance(new, dict):
        changes: list[FieldChange] = []
        for key in [*new, *(k for k in old if k not in new)]:
            changes += field_changes(
                old.get(key, ABSENT), new.get(key, ABSENT), _child_path(path, key)
            )
        return tuple(changes)
    if isinstance(old, list) and isinstance(new, list):
        changes = []
        for i in range(max(len(old), len(new))):
            changes += field_changes(
                old[i] if i < len(old) else ABSENT,
                new[i] if i < len(new) else ABSENT,
                _child_path(path, i),
            )
        return tuple(changes)
    return (FieldChange(path, old, new),)
