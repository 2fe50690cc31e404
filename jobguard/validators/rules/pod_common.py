"""What the pod-template modules share: upstream's PodValidationOptions of a CREATE (the
update-time ones are built in `pod_util`), JSON accessors that read a field as Go
decodes it, and apimachinery's small validators.

Upstream: `pkg/apis/core/validation/validation.go` (PodValidationOptions), kubernetes v1.37.2 (git tag v1.37.2); gate defaults from versions.py.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from jobguard.validators.errors import ErrorType, FieldError, invalid
from jobguard.validators.names import (
    dns1123_label_problems,
    dns1123_subdomain_problems,
    label_wording,
)
from jobguard.validators.versions import DEFAULT_VERSION, Release

CONTAINER_KINDS = ("initContainers", "containers", "ephemeralContainers")
"""The container lists of a pod spec, in podutil.VisitContainers' order."""
# PullPolicy values: a container's imagePullPolicy and an image volume's pullPolicy.
PULL_POLICIES = ["Always", "IfNotPresent", "Never"]


@dataclass(frozen=True, slots=True)
class PodOptions:
    """Upstream `PodValidationOptions` (pkg/apis/core/validation), the parts jobguard checks,
    for one release: the gates' defaults (versions.GATES) and the relaxations an UPDATE takes
    from the stored template (`get_validation_options_from_pod_spec_and_meta`)."""

    version: str
    # --- gates and code changes of the release (versions.GATES, versions.CHANGES) ---
    pod_level_resources: bool
    container_restart_rules: bool
    """AllowContainerRestartPolicyRules: the gate, or the stored template uses the rules."""
    restart_all_containers: bool
    """AllowRestartAllContainers: the gate, or the stored template uses the action."""
    env_files: bool
    """AllowEnvFilesValidation: the gate, or the stored template has a fileKeyRef."""
    image_volume: bool
    image_reference_required: bool
    """Not AllowEmptyImageVolumeReference (1.37: required in templates unless the stored
    template has an empty reference; before 1.37 required in pods only)."""
    strict_ip: bool
    newest_resize_policy: bool
    dra: bool
    hostname_override: bool
    topology_selector_merge: bool
    """AllowMatchLabelKeysInPodTopologySpreadSelectorMerge."""
    toleration_operators_listed: bool
    """ValidateTolerations knows Lt and Gt (from 1.35) and lists them as supported."""
    share_process_namespace_last: bool
    """validateShareProcessNamespace after the pod security context (1.37), not inside it; and
    validateWindows's host namespace fields after the security context's."""
    volume_attributes_class: bool
    """An ephemeral volume's volumeAttributesClassName is judged (EnableVolumeAttributesClass)."""
    # --- relaxations from the stored template (UPDATE) ---
    allow_taint_toleration_comparison_operators: bool = False
    allow_only_recursive_se_linux_change_policy: bool = True
    allow_indivisible_huge_pages_values: bool = False
    allow_invalid_label_value_in_selector: bool = False
    allow_invalid_label_value_in_required_node_affinity: bool = False
    allow_invalid_topology_spread_constraint_label_selector: bool = False
    old_pod_violates_match_label_keys_validation: bool = False
    old_pod_violates_legacy_match_label_keys_validation: bool = False
    allow_non_local_projected_token_path: bool = False
    allow_namespaced_sysctls_for_host_net_and_host_ipc: bool = False
    allow_user_namespaces_with_volume_devices: bool = False
    allow_user_namespaces_host_network_support: bool = False
    allow_existing_restart_container_for_non_sidecar_init_container: bool = False
    allow_sys_admin_when_privilege_escalation_false: bool = False
    allow_invalid_pod_deletion_cost: bool = False


@lru_cache(maxsize=16)
def pod_options(version: str = DEFAULT_VERSION) -> PodOptions:
    """The options of a CREATE (no stored template) in `version` (UnsupportedVersionError for
    a release not in versions.RELEASES)."""
    release = Release.of(version)
    return PodOptions(
        version=version,
        pod_level_resources=release.gate("PodLevelResources"),
        container_restart_rules=release.gate("ContainerRestartRules"),
        restart_all_containers=release.gate("RestartAllContainersOnContainerExits"),
        env_files=release.gate("EnvFiles"),
        image_volume=release.gate("ImageVolume"),
        image_reference_required=release.has("ImageVolumeReferenceRequiredInTemplates"),
        strict_ip=release.gate("StrictIPCIDRValidation"),
        newest_resize_policy=release.has("ResizePolicyOfNonSidecarInitContainers"),
        dra=release.gate("DynamicResourceAllocation"),
        hostname_override=release.gate("HostnameOverride"),
        topology_selector_merge=release.gate("MatchLabelKeysInPodTopologySpreadSelectorMerge"),
        toleration_operators_listed=release.has("TolerationComparisonOperatorsListed"),
        volume_attributes_class=release.gate("VolumeAttributesClass"),
        share_process_namespace_last=release.has("ShareProcessNamespaceAfterSecurityContext"),
        allow_taint_toleration_comparison_operators=release.gate(
            "TaintTolerationComparisonOperators"
        ),
        allow_only_recursive_se_linux_change_policy=not release.gate("SELinuxMount"),
        allow_invalid_pod_deletion_cost=not release.gate("PodDeletionCost"),
    )


# --- JSON as Go decodes it ------------------------------------------------------------------------


def visit_containers_with_path(spec: dict[str, Any], path: str) -> list[tuple[dict[str, Any], str]]:
    """podshelper.VisitContainersWithPath: each container (as JSON) with its path, init
    containers first, then containers, then ephemeral containers (`path`: the pod spec's)."""
    out = []
    for kind in CONTAINER_KINDS:
        for index, container in enumerate(as_list(spec.get(kind))):
            if isinstance(container, dict):
                out.append((container, f"{path}.{kind}[{index}]"))
    return out


def containers(
    spec: dict[str, Any], kinds: tuple[str, ...] = CONTAINER_KINDS
) -> Iterator[dict[str, Any]]:
    """VisitContainers: the containers (as JSON) of `kinds`, in that order (all by default)."""
    for kind in kinds:
        for container in as_list(spec.get(kind)):
            if isinstance(container, dict):
                yield container


def member(value: Any, *keys: str) -> Any:
    """The value at `keys` down nested objects; None where one is missing or not an object."""
    for key in keys:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def string_list(value: Any) -> list[str]:
    """A []string field: its strings (other types are the decoder's to judge)."""
    return [item for item in as_list(value) if isinstance(item, str)]


def go_string(value: Any) -> str:
    """A string member as the typed object holds it: absent, null or another type (the
    decoder's to name) is Go's empty string."""
    return value if isinstance(value, str) else ""


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
MAX_USER_ID = 2147483647


def validate_user_id(rule: str, value: Any, path: str) -> list[FieldError]:
    """IsValidUserID / IsValidGroupID: an integer from 0 to 2147483647 (another type is the
    decoder's to judge)."""
    number = opt_int(value)
    if number is None or 0 <= number <= MAX_USER_ID:
        return []
    return [invalid(rule, path, number, RANGE_INT32)]


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


def validate_labels(rule: str, labels: Any, path: str, version: str) -> list[FieldError]:
    """ValidateLabels: keys qualified names, values label values (at the map's path), in the
    words of release `version`."""
    words = label_wording(version)
    errors: list[FieldError] = []
    for key, value in as_dict(labels).items():
        errors += each(rule, path, key, words.key(key))
        if isinstance(value, str):
            errors += each(rule, path, value, words.value(value))
    return errors


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
