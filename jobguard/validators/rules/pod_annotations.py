"""POD-026: the pod-specific annotations of a template and their agreement with the fields.

Follows kubernetes `pkg/apis/core/validation/validation.go` at v1.37.2 (the same in v1.33-v1.36):
`ValidatePodSpecificAnnotations` (mirror-pod annotation, pod deletion cost, seccomp and AppArmor
annotations), `validateSeccompAnnotationsAndFields` and
`validateAppArmorAnnotationsAndFieldsMatchOnCreate`, as `ValidatePodTemplateSpec` calls them.
Upstream walks the annotations map in Go's random order; here they are taken in key order, so
that the same template always gets the same answer. The tolerations annotation
(`scheduler.alpha.kubernetes.io/tolerations`) is not judged.
"""

from __future__ import annotations

from typing import Any

from jobguard.validators.errors import FieldError, forbidden, invalid
from jobguard.validators.rules.pod_common import (
    PodOptions,
    as_dict,
    text,
    visit_containers_with_path,
)
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
