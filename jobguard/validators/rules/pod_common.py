"""What the pod-template modules share: the version options of upstream's
PodValidationOptions on CREATE (GetValidationOptionsFromPodSpecAndMeta with no old pod), JSON
accessors that read a field as Go decodes it, and apimachinery's small validators."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from jobguard.validators.errors import ErrorType, FieldError, invalid
from jobguard.validators.names import (
    dns1123_label_problems,
    dns1123_subdomain_problems,
    label_value_problems,
    qualified_name_problems,
)
from jobguard.validators.selectors import validate_label_selector
from jobguard.validators.versions import DEFAULT_VERSION, SUPPORTED_VERSIONS


@dataclass(frozen=True, slots=True)
class PodOptions:
    """The gate-dependent behaviour of pod validation on CREATE, for one Kubernetes version
    (default gates; docs/RULES.md, "Pod template (POD)")."""

    version: str
    # PodLevelResources: beta, on from 1.34 (dropped before validation in 1.33).
    pod_level_resources: bool
    # ContainerRestartRules: beta, on from 1.35 (container restartPolicy and rules).
    container_restart_rules: bool
    # RestartAllContainersOnContainerExits: beta, on in 1.36.
    restart_all_containers: bool
    # EnvFiles: beta, on from 1.35 (fileKeyRef, and the longer "must specify one of" message).
    env_files: bool
    # ImageVolume: beta on from 1.35 (image volumes are dropped before validation before).
    image_volume: bool
    # 1.36: an image volume's reference is required in templates too.
    image_reference_required: bool
    # StrictIPCIDRValidation: beta, on in 1.36.
    strict_ip: bool
    # 1.36 code: "when pod `restartPolicy` is 'Never'"; RestartContainer refused on
    # non-sidecar init containers.
    newest_resize_policy: bool
    # DynamicResourceAllocation: on from 1.34.
    dra: bool
    # HostnameOverride: beta, on from 1.35.
    hostname_override: bool

    @property
    def topology_selector_merge(self) -> bool:
        """MatchLabelKeysInPodTopologySpreadSelectorMerge: beta, on from 1.34."""
        return self.version != "1.33"


@lru_cache(maxsize=8)
def pod_options(version: str = DEFAULT_VERSION) -> PodOptions:
    if version not in SUPPORTED_VERSIONS:
        version = DEFAULT_VERSION
    minor = int(version.split(".")[1])
    return PodOptions(
        version=version,
        pod_level_resources=minor >= 34,
        container_restart_rules=minor >= 35,
        restart_all_containers=minor >= 36,
        env_files=minor >= 35,
        image_volume=minor >= 35,
        image_reference_required=minor >= 36,
        strict_ip=minor >= 36,
        newest_resize_policy=minor >= 36,
        dra=minor >= 34,
        hostname_override=minor >= 35,
    )


# --- JSON as Go decodes it ------------------------------------------------------------------------


def as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def text(value: Any) -> str | None:
    """A string field: absent or null is "", another type is not judged (None)."""
    if value is None:
        return ""
    return value if isinstance(value, str) else None


def integer(value: Any) -> int | None:
    """An integer field: absent or null is 0, another type is not judged (None)."""
    if value is None:
        return 0
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def opt_int(value: Any) -> int | None:
    """A pointer-to-integer field: None when absent (or of another type)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


# --- apimachinery validators ------------------------------------------------------------------------

RANGE_INT32 = "must be between 0 and 2147483647, inclusive"
NON_NEGATIVE = "must be greater than or equal to 0"
POSITIVE = "must be greater than zero"
FILE_MODE = "must be a number between 0 and 0777 (octal), both inclusive"


def duplicate(rule: str, path: str, value: Any) -> FieldError:
    return FieldError(rule, path, ErrorType.DUPLICATE, value=value)


def not_found(rule: str, path: str, value: Any) -> FieldError:
    return FieldError(rule, path, ErrorType.NOT_FOUND, value=value)


def each(rule: str, path: str, value: Any, problems: tuple[str, ...]) -> tuple[FieldError, ...]:
    """An Invalid error for each problem (usually none: no list is built then)."""
    if not problems:
        return ()
    return tuple(invalid(rule, path, value, problem) for problem in problems)


def label_problems(value: str) -> tuple[str, ...]:
    return dns1123_label_problems(value)


def subdomain_problems(value: str) -> tuple[str, ...]:
    return dns1123_subdomain_problems(value)


def check_labels(rule: str, labels: Any, path: str) -> list[FieldError]:
    """ValidateLabels: keys qualified names, values label values (at the map's path)."""
    errors: list[FieldError] = []
    for key, value in as_dict(labels).items():
        errors += each(rule, path, key, qualified_name_problems(key))
        if isinstance(value, str):
            errors += each(rule, path, value, label_value_problems(value))
    return errors


def check_label_selector(rule: str, selector: Any, path: str) -> list[FieldError]:
    """metav1 ValidateLabelSelector (`selectors.validate_label_selector`)."""
    return validate_label_selector(rule, selector, path)


def is_valid_ip(value: str) -> bool:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return False
    return True


def ip_problems(value: str, strict: bool) -> tuple[str, ...]:
    """IsValidIPForLegacyField (lenient: leading zeros in IPv4 are accepted) or, with
    StrictIPCIDRValidation, IsValidIP."""
    if is_valid_ip(value):
        if strict and ":" in value:
            address = ipaddress.ip_address(value)
            if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
                return ("must not be an IPv4-mapped IPv6 address",)
        return ()
    parts = value.split(".")
    legacy_v4 = len(parts) == 4 and all(p.isdigit() and len(p) > 0 and int(p) < 256 for p in parts)
    if legacy_v4:
        return ("must not have leading 0s",) if strict else ()
    return ("must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",)


def local_path_problems(value: str) -> tuple[str, ...]:
    """validateLocalDescendingPath: relative, no '..' element."""
    problems: list[str] = []
    if value.startswith("/"):
        problems.append("must be a relative path")
    if ".." in value.split("/"):
        problems.append("must not contain '..'")
    return tuple(problems)


def file_mode_error(rule: str, path: str, mode: Any) -> list[FieldError]:
    if isinstance(mode, int) and not isinstance(mode, bool) and not 0 <= mode <= 0o777:
        return [invalid(rule, path, mode, FILE_MODE)]
    return []
