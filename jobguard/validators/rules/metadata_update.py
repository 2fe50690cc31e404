"""IM-008: object metadata rules (upstream ValidateObjectMeta / ValidateObjectMetaUpdate)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jobguard.validators.errors import (
    ABSENT,
    ErrorType,
    FieldChange,
    FieldError,
    immutable,
    invalid,
)
from jobguard.validators.names import label_value_problems, qualified_name_problems
from jobguard.validators.semantic import normalize

_MAX_ANNOTATIONS_BYTES = 256 * 1024
_IMMUTABLE_META = (
    "name",
    "namespace",
    "uid",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
)


def key_problems(key: str) -> tuple[str, ...]:
    """IsQualifiedName of a label or annotation key (names.py's: upstream's messages, every one
    of them)."""
    return qualified_name_problems(key)


def value_problems(value: str) -> tuple[str, ...]:
    """IsValidLabelValue (names.py's)."""
    return label_value_problems(value)


def check_labels_and_annotations(
    metadata: Mapping[str, Any], old: None, path: str, opts: None
) -> list[FieldError]:
    """IM-008: label and annotation syntax (upstream ValidateObjectMeta's part of it), on the
    metadata as sent."""
    errors: list[FieldError] = []
    labels = metadata.get("labels") or {}
    for key, value in labels.items():
        for problem in key_problems(key):
            errors.append(invalid("IM-008", f"{path}.labels", key, problem))
        if isinstance(value, str):
            for problem in value_problems(value):
                errors.append(invalid("IM-008", f"{path}.labels", value, problem))
    annotations = metadata.get("annotations") or {}
    total = 0
    for key, value in annotations.items():
        for problem in key_problems(key.lower()):
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
