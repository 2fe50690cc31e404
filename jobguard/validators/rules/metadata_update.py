"""IM-008: object metadata rules (upstream ValidateObjectMeta / ValidateObjectMetaUpdate)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from jobguard.validators.errors import (
    ABSENT,
    ErrorType,
    FieldChange,
    FieldError,
    immutable,
    invalid,
)
from jobguard.validators.names import (
    DNS1123_SUBDOMAIN_MAX_LENGTH,
    QUALIFIED_NAME,
    is_dns1123_subdomain,
)
from jobguard.validators.semantic import normalize

_NAME_PART = QUALIFIED_NAME
_LABEL_VALUE = _NAME_PART
_MAX_NAME_PART = 63
_MAX_PREFIX = DNS1123_SUBDOMAIN_MAX_LENGTH
_MAX_ANNOTATIONS_BYTES = 256 * 1024
_IMMUTABLE_META = (
    "name",
    "namespace",
    "uid",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
)


# The checks are cached for strings a valid key or value can be (317 and 63 characters), so
# each cache holds at most 4,096 short strings: about 2 MiB at worst. Longer strings are
# invalid at the length checks, which cost nothing to repeat.
_MAX_QUALIFIED_NAME = _MAX_PREFIX + 1 + _MAX_NAME_PART


def qualified_name_problem(key: str) -> str | None:
    """Why a label or annotation key is not a qualified name, or None."""
    if len(key) > _MAX_QUALIFIED_NAME:
        return _qualified_name_problem(key)
    return _cached_qualified_name_problem(key)


def _qualified_name_problem(key: str) -> str | None:
    prefix, slash, name = key.rpartition("/")
    if slash:
        if not prefix:
            return "prefix part must be non-empty"
        if not is_dns1123_subdomain(prefix):
            return "prefix part must be a lowercase RFC 1123 subdomain"
    if not name:
        return "name part must be non-empty"
    if len(name) > _MAX_NAME_PART:
        return f"name part must be no more than {_MAX_NAME_PART} characters"
    if _NAME_PART.fullmatch(name) is None:
        return (
            "name part must consist of alphanumeric characters, '-', '_' or '.', and must "
            "start and end with an alphanumeric character"
        )
    return None


_cached_qualified_name_problem = lru_cache(maxsize=4096)(_qualified_name_problem)


def label_value_problem(value: str) -> str | None:
    if len(value) > _MAX_NAME_PART:
        return _label_value_problem(value)
    return _cached_label_value_problem(value)


def _label_value_problem(value: str) -> str | None:
    if value == "":
        return None
    if len(value) > _MAX_NAME_PART:
        return f"must be no more than {_MAX_NAME_PART} characters"
    if _LABEL_VALUE.fullmatch(value) is None:
        return (
            "a valid label must be an empty string or consist of alphanumeric characters, "
            "'-', '_' or '.', and must start and end with an alphanumeric character"
        )
    return None


_cached_label_value_problem = lru_cache(maxsize=4096)(_label_value_problem)


def check_labels_and_annotations(
    metadata: Mapping[str, Any], old: None, path: str, opts: None
) -> list[FieldError]:
    """IM-008: label and annotation syntax (upstream ValidateObjectMeta's part of it), on the
    metadata as sent."""
    errors: list[FieldError] = []
    # The cached checks are called here directly for the usual short strings (what
    # qualified_name_problem and label_value_problem do, without a call of theirs per key).
    labels = metadata.get("labels") or {}
    for key, value in labels.items():
        problem = (
            _cached_qualified_name_problem(key)
            if len(key) <= _MAX_QUALIFIED_NAME
            else _qualified_name_problem(key)
        )
        if problem is not None:
            errors.append(invalid("IM-008", f"{path}.labels", key, problem))
        if isinstance(value, str):
            problem = (
                _cached_label_value_problem(value)
                if len(value) <= _MAX_NAME_PART
                else _label_value_problem(value)
            )
            if problem is not None:
                errors.append(invalid("IM-008", f"{path}.labels", value, problem))
    annotations = metadata.get("annotations") or {}
    total = 0
    for key, value in annotations.items():
        lowered = key.lower()
        problem = (
            _cached_qualified_name_problem(lowered)
            if len(lowered) <= _MAX_QUALIFIED_NAME
            else _qualified_name_problem(lowered)
        )
        if problem is not None:
            errors.append(invalid("IM-008", f"{path}.annotations", key, problem))
        total += len(key) + len(value if isinstance(value, str) else "")
    if total > _MAX_ANNOTATIONS_BYTES:
        errors.append(
            FieldError(
                "IM-008",
                f"{path}.annotations",
                ErrorType.TOO_LONG,
                f"may not be more than {_MAX_ANNOTATIONS_BYTES} bytes",
            )
        )
    return errors


@dataclass(frozen=True, slots=True)
class MetadataOptions:
    syntax: bool
    """Label and annotation syntax is judged too (False: the caller already judged it)."""


WITH_SYNTAX = MetadataOptions(syntax=True)
WITHOUT_SYNTAX = MetadataOptions(syntax=False)


def check_metadata_update(
    new: Mapping[str, Any], old: Mapping[str, Any], path: str, opts: MetadataOptions
) -> list[FieldError]:
    """IM-008 (upstream ValidateObjectMetaUpdate) on the metadata as sent: immutable members,
    and label/annotation syntax unless the caller already checked it."""
    errors: list[FieldError] = []
    for key in _IMMUTABLE_META:
        new_value, old_value = new.get(key), old.get(key)
        if new_value != old_value and normalize({key: new_value}) != normalize({key: old_value}):
            change = FieldChange(f"{path}.{key}", old.get(key, ABSENT), new.get(key, ABSENT))
            errors.append(immutable("IM-008", f"{path}.{key}", new_value, (change,)))
    return errors + check_labels_and_annotations(new, None, path, None) if opts.syntax else errors
