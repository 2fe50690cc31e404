"""Pod templates: the scheduling directives of KEP-2926, the container resources of KEP-5440,
and equality after pod defaulting (templates as JSON, `as_sent`).

`SCHEDULING_DIRECTIVES` is the one definition of the scheduling directives: the template rules
(TM-001..TM-004), the lifecycle model (which updates touch them: NE-009, SUS-004), the exported
ValidatingAdmissionPolicies and the rule reference all read it.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from jobguard.validators.defaults import default_pod_template
from jobguard.validators.model import PodTemplateSpec
from jobguard.validators.rules.pod_common import member
from jobguard.validators.semantic import semantic_equal


class SchedulingDirective(NamedTuple):
    """A pod template field a suspended Job's update may change."""

    path: tuple[str, ...]
    """Where it is in the template."""
    is_list: bool
    """A list (else a map or an object)."""


SCHEDULING_DIRECTIVES: tuple[SchedulingDirective, ...] = (
    SchedulingDirective(("metadata", "labels"), False),
    SchedulingDirective(("metadata", "annotations"), False),
    SchedulingDirective(("spec", "nodeSelector"), False),
    SchedulingDirective(("spec", "tolerations"), True),
    SchedulingDirective(("spec", "schedulingGates"), True),
    SchedulingDirective(("spec", "affinity", "nodeAffinity"), False),
)
"""Upstream's validatePodTemplateUpdate with AllowMutableSchedulingDirectives
(pkg/apis/batch/validation/validation.go, v1.37.2): the old template takes these of the new one
before the comparison (of the affinity only nodeAffinity, and an affinity left empty is
dropped)."""

SCHEDULING_DIRECTIVES_TEXT = ", ".join(
    f"template {d.path[-1]}" if d.path[0] == "metadata" else ".".join(d.path[1:])
    for d in SCHEDULING_DIRECTIVES
)
"""How the rule reference and messages list them."""


def _snake(key: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in key)


_DIRECTIVE_ATTRIBUTES = tuple(
    tuple((key, _snake(key)) for key in d.path) for d in SCHEDULING_DIRECTIVES
)
"""The directives' paths in the decoded model (`PodTemplateSpec`), each step as its JSON key
and its attribute: objects up to the affinity, which is kept as JSON."""


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
    sections: dict[str, dict[str, Any]] = {}
    for directive in SCHEDULING_DIRECTIVES:
        section, key, *rest = directive.path
        if section not in sections:
            sections[section] = dict(member(old_template, section) or {})
        target = sections[section]
        if not rest:
            _set_or_drop(target, key, member(new_template, section, key))
            continue
        # One field of an object (nodeAffinity of the affinity): the object's other fields
        # must stay as they were.
        [child] = rest
        old_parent = target.get(key)
        new_parent = member(new_template, section, key)
        if isinstance(new_parent, dict):
            merged = dict(old_parent) if isinstance(old_parent, dict) else {}
            _set_or_drop(merged, child, new_parent.get(child))
            target[key] = merged
        elif isinstance(old_parent, dict):
            merged = dict(old_parent)
            merged.pop(child, None)
            target[key] = merged
    result.update(sections)
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


def _scheduling_directives(template: PodTemplateSpec | None) -> tuple[Any, ...]:
    """The template's scheduling directives, in `SCHEDULING_DIRECTIVES` order (None: unset)."""
    out: list[Any] = []
    for attributes in _DIRECTIVE_ATTRIBUTES:
        value: Any = template
        for key, attribute in attributes:
            if value is None:
                break
            value = value.get(key) if isinstance(value, dict) else getattr(value, attribute)
        out.append(value)
    return tuple(out)


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
        old_value != new_value
        and not semantic_equal({d.path[-1]: old_value}, {d.path[-1]: new_value})
        for d, old_value, new_value in zip(SCHEDULING_DIRECTIVES, old, new, strict=True)
    )


def equal_after_defaults(old: Any, new: Any) -> bool:
    """Semantic equality of pod templates, defaulting both only when they differ as sent
    (a stored template against a manifest)."""
    return semantic_equal(old, new) or semantic_equal(
        default_pod_template(old), default_pod_template(new)
    )
