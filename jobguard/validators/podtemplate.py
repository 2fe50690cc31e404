"""Pod templates: the scheduling directives of KEP-2926, the container resources of KEP-5440,
and equality after pod defaulting (templates as JSON, `as_sent`).

Shared by the template rules (TM-001..TM-004) and the lifecycle model (which updates touch the
scheduling directives), so both mean the same thing by them.
"""

from __future__ import annotations

from typing import Any

from jobguard.validators.defaults import default_pod_template
from jobguard.validators.model import PodTemplateSpec
from jobguard.validators.semantic import semantic_equal

SCHEDULING_SPEC_FIELDS = ("nodeSelector", "tolerations", "schedulingGates")


def _get(raw: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(raw, dict):
            return None
        raw = raw.get(key)
    return raw


def _set_or_drop(target: dict[str, Any], key: str, value: Any) -> None:
    if value is None:
        target.pop(key, None)
    else:
        target[key] = value


def overlay_scheduling_directives(
    old_template: dict[str, Any], new_template: dict[str, Any]
) -> dict[str, Any]:
    """The old template with the new scheduling directives (TM-002) copied over it."""
    result = dict(old_template)
    old_meta = dict(_get(old_template, "metadata") or {})
    for key in ("labels", "annotations"):
        _set_or_drop(old_meta, key, _get(new_template, "metadata", key))
    result["metadata"] = old_meta
    old_spec = dict(_get(old_template, "spec") or {})
    new_spec = _get(new_template, "spec") or {}
    for key in SCHEDULING_SPEC_FIELDS:
        _set_or_drop(old_spec, key, new_spec.get(key))
    # Only nodeAffinity is mutable; podAffinity and podAntiAffinity must stay as they were.
    old_affinity = old_spec.get("affinity")
    new_affinity = new_spec.get("affinity")
    if isinstance(new_affinity, dict):
        merged = dict(old_affinity) if isinstance(old_affinity, dict) else {}
        _set_or_drop(merged, "nodeAffinity", new_affinity.get("nodeAffinity"))
        old_spec["affinity"] = merged
    elif isinstance(old_affinity, dict):
        merged = dict(old_affinity)
        merged.pop("nodeAffinity", None)
        old_spec["affinity"] = merged
    result["spec"] = old_spec
    return result


def overlay_resources(old_pod: dict[str, Any], new_pod: dict[str, Any]) -> dict[str, Any]:
    """The old pod spec with each same-named container's resources taken from the new one."""
    result = dict(old_pod)
    for key in ("containers", "initContainers"):
        old_list = old_pod.get(key) or []
        new_list = new_pod.get(key) or []
        if len(old_list) != len(new_list):
            continue
        merged = []
        for old_c, new_c in zip(old_list, new_list, strict=True):
            if (
                isinstance(old_c, dict)
                and isinstance(new_c, dict)
                and old_c.get("name") == new_c.get("name")
            ):
                old_c = dict(old_c)
                _set_or_drop(old_c, "resources", new_c.get("resources"))
            merged.append(old_c)
        result[key] = merged
    return result


_DIRECTIVE_KEYS = ("labels", "annotations", *SCHEDULING_SPEC_FIELDS, "nodeAffinity")


def _scheduling_directives(template: PodTemplateSpec | None) -> tuple[Any, ...]:
    """What `overlay_scheduling_directives` takes from a template, in `_DIRECTIVE_KEYS` order."""
    meta = template.metadata if template else None
    pod = template.spec if template else None
    affinity = pod.affinity if pod else None
    return (
        meta.labels if meta else None,
        meta.annotations if meta else None,
        pod.node_selector if pod else None,
        pod.tolerations if pod else None,
        pod.scheduling_gates if pod else None,
        affinity.get("nodeAffinity") if affinity else None,
    )


def scheduling_directives_changed(
    old_template: PodTemplateSpec | None, new_template: PodTemplateSpec | None
) -> bool:
    """Whether an update touches the mutable scheduling directives of TM-002: the overlay of
    the new directives differs from the old template exactly when one of them differs."""
    old, new = _scheduling_directives(old_template), _scheduling_directives(new_template)
    if old == new:
        return False
    # Key by key, so only a directive that differs as sent is normalised.
    return any(
        old_value != new_value and not semantic_equal({key: old_value}, {key: new_value})
        for key, old_value, new_value in zip(_DIRECTIVE_KEYS, old, new, strict=True)
    )


def equal_after_defaults(old: Any, new: Any) -> bool:
    """Semantic equality of pod templates, defaulting both only when they differ as sent
    (a stored template against a manifest)."""
    return semantic_equal(old, new) or semantic_equal(
        default_pod_template(old), default_pod_template(new)
    )
