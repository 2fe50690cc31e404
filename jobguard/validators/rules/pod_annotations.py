"""POD-026: the pod-specific annotations of a template and their agreement with the fields.

Follows kubernetes `pkg/apis/core/validation/validation.go` at v1.37.2 (the same in v1.33-v1.36):
`ValidatePodSpecificAnnotations` (mirror-pod annotation, pod deletion cost, seccomp and AppArmor
annotations), `validateSeccompAnnotationsAndFields` and
`validateAppArmorAnnotationsAndFieldsMatchOnCreate`, as `ValidatePodTemplateSpec` calls them.
Upstream walks the annotations map in Go's random order; here they are taken in key order, so
that the same template always gets the same answer.

The tolerations annotation (`scheduler.alpha.kubernetes.io/tolerations`), still read in v1.37.2,
is decoded as Go's encoding/json decodes it into `[]core.Toleration` and judged by
`ValidateTolerations` (POD-021) under the annotation's key. A value that is not JSON gets the
message of Go's scanner for where Python's decoder stops; a few literal and number cases stop
one character later or earlier there, so their message can name a neighbouring character.
"""

from __future__ import annotations

import json
import re
from typing import Any

from jobguard.validators.cron import go_quote
from jobguard.validators.errors import FieldError, forbidden, invalid
from jobguard.validators.rules.pod_common import (
    PodOptions,
    as_dict,
    text,
    visit_containers_with_path,
)
from jobguard.validators.rules.pod_scheduling import validate_tolerations
from jobguard.validators.rules.pod_util import POD_DELETION_COST, valid_pod_deletion_cost

MIRROR_POD = "kubernetes.io/config.mirror"
SECCOMP_POD = "seccomp.security.alpha.kubernetes.io/pod"
SECCOMP_CONTAINER_PREFIX = "container.seccomp.security.alpha.kubernetes.io/"
APPARMOR_CONTAINER_PREFIX = "container.apparmor.security.beta.kubernetes.io/"
RUNTIME_DEFAULT = "runtime/default"
DOCKER_DEFAULT = "docker/default"
UNCONFINED = "unconfined"
LOCALHOST_PREFIX = "localhost/"


def validate_local_descending_path(value: str, path: str) -> list[FieldError]:
    """validateLocalDescendingPath (path.IsAbs, then validatePathNoBacksteps)."""
    errors = []
    if value.startswith("/"):
        errors.append(invalid("POD-026", path, value, "must be a relative path"))
    if ".." in value.split("/"):
        errors.append(invalid("POD-026", path, value, "must not contain '..'"))
    return errors


def validate_seccomp_profile(value: str, path: str) -> list[FieldError]:
    """ValidateSeccompProfile (an annotation's value)."""
    if value in (RUNTIME_DEFAULT, DOCKER_DEFAULT, UNCONFINED):
        return []
    if value.startswith(LOCALHOST_PREFIX):
        return validate_local_descending_path(value[len(LOCALHOST_PREFIX) :], path)
    return [invalid("POD-026", path, value, "must be a valid seccomp profile")]


def validate_app_armor_profile_format(value: str) -> str:
    """ValidateAppArmorProfileFormat: the problem, "" when none."""
    if value in ("", RUNTIME_DEFAULT, UNCONFINED) or value.startswith(LOCALHOST_PREFIX):
        return ""
    return f'invalid AppArmor profile name: "{value}"'


def validate_pod_specific_annotations(
    annotations: dict[str, Any], spec: dict[str, Any], path: str, options: PodOptions
) -> list[FieldError]:
    """ValidatePodSpecificAnnotations (`path` is the annotations')."""
    errors: list[FieldError] = []
    if MIRROR_POD in annotations and not text(spec.get("nodeName")):
        detail = "must set spec.nodeName if mirror pod annotation is set"
        errors.append(invalid("POD-026", f"{path}[{MIRROR_POD}]", annotations[MIRROR_POD], detail))
    tolerations = annotations.get(TOLERATIONS_ANNOTATION)
    if tolerations and isinstance(tolerations, str):
        errors += validate_tolerations_in_pod_annotations(annotations, path, options)
    if not options.allow_invalid_pod_deletion_cost and not valid_pod_deletion_cost(annotations):
        value = annotations.get(POD_DELETION_COST)
        errors.append(
            invalid("POD-026", f"{path}[{POD_DELETION_COST}]", value, "must be a 32bit integer")
        )
    # ValidateSeccompPodAnnotations
    profile = annotations.get(SECCOMP_POD)
    if isinstance(profile, str):
        errors += validate_seccomp_profile(profile, f"{path}.{SECCOMP_POD}")
    for key in sorted(k for k in annotations if k.startswith(SECCOMP_CONTAINER_PREFIX)):
        if isinstance(annotations[key], str):
            errors += validate_seccomp_profile(annotations[key], f"{path}.{key}")
    # ValidateAppArmorPodAnnotations
    names = {c.get("name") for c, _ in visit_containers_with_path(spec, "")}
    for key in sorted(k for k in annotations if k.startswith(APPARMOR_CONTAINER_PREFIX)):
        container = key[len(APPARMOR_CONTAINER_PREFIX) :]
        if container not in names:
            errors.append(invalid("POD-026", f"{path}[{key}]", container, "container not found"))
        value = annotations[key]
        problem = validate_app_armor_profile_format(value) if isinstance(value, str) else ""
        if problem:
            errors.append(invalid("POD-026", f"{path}[{key}]", value, problem))
    return errors


def validate_seccomp_annotations_and_fields_match(
    annotation: str, profile: Any, path: str
) -> list[FieldError]:
    """validateSeccompAnnotationsAndFieldsMatch."""
    if not isinstance(profile, dict):
        return []
    kind = profile.get("type")
    if kind == "Unconfined" and annotation != UNCONFINED:
        return [
            forbidden("POD-026", f"{path}.type", "seccomp type in annotation and field must match")
        ]
    if kind == "RuntimeDefault" and annotation not in (RUNTIME_DEFAULT, DOCKER_DEFAULT):
        return [
            forbidden("POD-026", f"{path}.type", "seccomp type in annotation and field must match")
        ]
    if kind == "Localhost":
        if not annotation.startswith(LOCALHOST_PREFIX):
            detail = "seccomp type in annotation and field must match"
            return [forbidden("POD-026", f"{path}.type", detail)]
        if annotation[len(LOCALHOST_PREFIX) :] != profile.get("localhostProfile"):
            detail = "seccomp profile in annotation and field must match"
            return [forbidden("POD-026", f"{path}.localhostProfile", detail)]
    return []


def validate_seccomp_annotations_and_fields(
    meta: dict[str, Any], spec: dict[str, Any], path: str
) -> list[FieldError]:
    """validateSeccompAnnotationsAndFields (`path` is the pod spec's)."""
    annotations = as_dict(meta.get("annotations"))
    errors: list[FieldError] = []
    profile = as_dict(spec.get("securityContext")).get("seccompProfile")
    annotation = annotations.get(SECCOMP_POD)
    if profile is not None and isinstance(annotation, str):
        at = f"{path}.securityContext.seccompProfile"
        errors += validate_seccomp_annotations_and_fields_match(annotation, profile, at)
    for container, at in visit_containers_with_path(spec, path):
        profile = as_dict(container.get("securityContext")).get("seccompProfile")
        annotation = annotations.get(f"{SECCOMP_CONTAINER_PREFIX}{container.get('name')}")
        if profile is not None and isinstance(annotation, str):
            errors += validate_seccomp_annotations_and_fields_match(
                annotation, profile, f"{at}.securityContext.seccompProfile"
            )
    return errors


def validate_app_armor_annotations_and_fields_match_on_create(
    meta: dict[str, Any], spec: dict[str, Any], path: str
) -> list[FieldError]:
    """validateAppArmorAnnotationsAndFieldsMatchOnCreate (`path` is the pod spec's)."""
    if as_dict(spec.get("os")).get("name") == "windows":
        return []  # no consistency check for Windows pods
    annotations = as_dict(meta.get("annotations"))
    pod_profile = as_dict(spec.get("securityContext")).get("appArmorProfile")
    errors: list[FieldError] = []
    for container, at in visit_containers_with_path(spec, path):
        profile = as_dict(container.get("securityContext")).get("appArmorProfile") or pod_profile
        annotation = annotations.get(f"{APPARMOR_CONTAINER_PREFIX}{container.get('name')}")
        if not isinstance(profile, dict) or not isinstance(annotation, str):
            continue
        at = f"{at}.securityContext.appArmorProfile"
        kind = profile.get("type")
        mismatch = "apparmor type in annotation and field must match"
        if (kind == "Unconfined" and annotation != UNCONFINED) or (
            kind == "RuntimeDefault" and annotation != RUNTIME_DEFAULT
        ):
            errors.append(forbidden("POD-026", f"{at}.type", mismatch))
        elif kind == "Localhost":
            if not annotation.startswith(LOCALHOST_PREFIX):
                errors.append(forbidden("POD-026", f"{at}.type", mismatch))
            elif annotation[len(LOCALHOST_PREFIX) :] != profile.get("localhostProfile"):
                detail = "apparmor profile in annotation and field must match"
                errors.append(forbidden("POD-026", f"{at}.localhostProfile", detail))
    return errors


# --- the tolerations annotation ----------------------------------------------------------------

TOLERATIONS_ANNOTATION = "scheduler.alpha.kubernetes.io/tolerations"
# core.Toleration's members: (the name Go's decoder matches, case-insensitively; the Go type).
_TOLERATION_FIELDS = {
    "key": ("Key", "string"),
    "operator": ("Operator", "core.TolerationOperator"),
    "value": ("Value", "string"),
    "effect": ("Effect", "core.TaintEffect"),
    "tolerationseconds": ("TolerationSeconds", "int64"),
}
_INT64 = 2**63


class _Number(str):
    """A JSON number as written (Go's decoder parses the literal for the target type)."""


class _GoJsonError(ValueError):
    """What encoding/json's Unmarshal returns, in its words."""


def _json_kind(value: Any) -> str:
    """The JSON kind an UnmarshalTypeError names."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, _Number):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _quote_char(char: str) -> str:
    """encoding/json's quoteChar."""
    if char == "'":
        return "'\\''"
    if char == '"':
        return "'\"'"
    return "'" + go_quote(char)[1:-1] + "'"


def _innermost_open(text: str, end: int) -> str:
    """The innermost bracket open before `end` ("[" or "{"), strings skipped."""
    stack: list[str] = []
    in_string = escaped = False
    for char in text[:end]:
        if in_string:
            escaped, in_string = (False, True) if escaped else (char == "\\", char != '"')
        elif char == '"':
            in_string = True
        elif char in "[{":
            stack.append(char)
        elif char in "]}" and stack:
            stack.pop()
    return stack[-1] if stack else ""


def _syntax_error(text: str, error: json.JSONDecodeError) -> str:
    """encoding/json's SyntaxError for the places Python's decoder stops at (the scanner's
    wording; a few literal and number cases are named by the character Python stops at)."""
    if error.pos >= len(text) or error.msg.startswith("Unterminated string"):
        return "unexpected end of JSON input"
    char = _quote_char(text[error.pos])
    msg = error.msg
    if msg == "Expecting property name enclosed in double quotes":
        context = "looking for beginning of object key string"
    elif msg == "Expecting ':' delimiter":
        context = "after object key"
    elif msg == "Expecting ',' delimiter":
        in_object = _innermost_open(text, error.pos) == "{"
        context = "after object key:value pair" if in_object else "after array element"
    elif msg == "Extra data":
        context = "after top-level value"
    elif msg.startswith("Invalid control character"):
        context = "in string literal"
    elif msg.startswith("Invalid \\uXXXX"):
        context = "in \\u hexadecimal character escape"
    elif msg.startswith("Invalid \\escape"):
        context = "in string escape code"
    else:
        context = "looking for beginning of value"
    return f"invalid character {char} {context}"


def _reject_constant(name: str) -> Any:
    # Python reads NaN and Infinity; Go's scanner stops at their first letter.
    raise _GoJsonError(f"invalid character '{name.lstrip('-')[0]}' looking for beginning of value")


def get_tolerations_from_pod_annotations(value: str) -> list[dict[str, Any]]:
    """helper.GetTolerationsFromPodAnnotations: json.Unmarshal into []core.Toleration, with
    Go's decoder's rules (members matched case-insensitively, the last one winning; null a
    no-op; the first type error reported). Raises _GoJsonError with Go's message."""
    try:
        parsed = json.loads(
            value, parse_int=_Number, parse_float=_Number, parse_constant=_reject_constant
        )
    except json.JSONDecodeError as error:
        raise _GoJsonError(_syntax_error(value, error)) from None
    except RecursionError:
        raise _GoJsonError("exceeded max depth") from None
    if parsed is None:
        return []
    if not isinstance(parsed, list):
        kind = _json_kind(parsed)
        raise _GoJsonError(f"json: cannot unmarshal {kind} into Go value of type []core.Toleration")
    tolerations: list[dict[str, Any]] = []
    first_error = ""
    for item in parsed:
        toleration: dict[str, Any] = {f: "" for f in ("key", "operator", "value", "effect")}
        toleration["tolerationSeconds"] = None
        tolerations.append(toleration)
        if item is None:
            continue
        if not isinstance(item, dict):
            kind = _json_kind(item)
            first_error = first_error or (
                f"json: cannot unmarshal {kind} into Go value of type core.Toleration"
            )
            continue
        for member, member_value in item.items():
            found = _TOLERATION_FIELDS.get(member.lower())
            if found is None or member_value is None:
                continue
            go_name, go_type = found
            problem = ""
            if go_name == "TolerationSeconds":
                number = member_value if isinstance(member_value, _Number) else None
                if number is None:
                    problem = _json_kind(member_value)
                elif re.fullmatch(r"-?[0-9]+", number) is None or not (
                    -_INT64 <= int(number) < _INT64
                ):
                    problem = f"number {number}"
                else:
                    toleration["tolerationSeconds"] = int(number)
            elif isinstance(member_value, str) and not isinstance(member_value, _Number):
                toleration[go_name[0].lower() + go_name[1:]] = member_value
            else:
                problem = _json_kind(member_value)
            if problem and not first_error:
                first_error = (
                    f"json: cannot unmarshal {problem} into Go struct field "
                    f"Toleration.{go_name} of type {go_type}"
                )
    if first_error:
        raise _GoJsonError(first_error)
    return tolerations


def validate_tolerations_in_pod_annotations(
    annotations: dict[str, Any], path: str, options: PodOptions
) -> list[FieldError]:
    """ValidateTolerationsInPodAnnotations (`path` is the annotations'): the annotation reads
    as JSON tolerations, which ValidateTolerations (POD-021) then judges under the annotation's
    key."""
    try:
        tolerations = get_tolerations_from_pod_annotations(annotations[TOLERATIONS_ANNOTATION])
    except _GoJsonError as error:
        return [invalid("POD-026", path, TOLERATIONS_ANNOTATION, str(error))]
    return validate_tolerations(tolerations, f"{path}.{TOLERATIONS_ANNOTATION}", options)
