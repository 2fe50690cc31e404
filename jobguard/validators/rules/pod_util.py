"""Upstream's update-time pod validation options: `GetValidationOptionsFromPodSpecAndMeta`
and the helpers it calls, ported from kubernetes `pkg/api/pod/util.go` (v1.37.2; the
relaxations of v1.33-v1.36 are the same set but where versions.CHANGES says otherwise).

On UPDATE a value the stored template already holds stays allowed: the Job and CronJob
strategies build these options from the old and the new template for every request
(`validationOptionsForJob`, `GetValidationOptionsFromPodTemplate`). Every pod rule reads its
relaxations from the options, never from the stored object itself.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

from jobguard.validators.names import label_wording
from jobguard.validators.quantity import QuantityError, quantity_of
from jobguard.validators.rules.pod_common import (
    PodOptions,
    as_dict,
    as_list,
    containers,
    local_path_problems,
    pod_options,
    text,
)
from jobguard.validators.rules.pod_scheduling import (
    validate_match_label_keys_and_mismatch_label_keys,
    validate_match_label_keys_in_topology_spread,
)
from jobguard.validators.rules.pod_security import validate_host_sysctl
from jobguard.validators.selectors import LabelSelectorOptions, validate_label_selector
from jobguard.validators.versions import Release

POD_DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"
_HUGEPAGES = "hugepages-"


def get_validation_options_from_pod_spec_and_meta(
    pod_spec: dict[str, Any] | None,
    old_pod_spec: dict[str, Any] | None,
    pod_meta: dict[str, Any] | None,
    old_pod_meta: dict[str, Any] | None,
    version: str,
) -> PodOptions:
    """GetValidationOptionsFromPodSpecAndMeta for `version`'s default gates; the old spec and
    metadata are None on CREATE (the cached CREATE options are returned then)."""
    base = pod_options(version)
    if old_pod_spec is None and old_pod_meta is None:
        return base
    release = Release.of(version)
    changes: dict[str, Any] = {}
    if old_pod_spec is not None:
        old = old_pod_spec
        if release.gate("TaintTolerationComparisonOperators") is False:
            changes["allow_taint_toleration_comparison_operators"] = (
                base.toleration_operators_listed
                and taint_toleration_comparison_operators_in_use(old)
            )
        if base.allow_only_recursive_se_linux_change_policy:
            # useOnlyRecursiveSELinuxChangePolicy: any policy in the old spec keeps it updatable.
            changes["allow_only_recursive_se_linux_change_policy"] = not (
                se_linux_change_policy_in_use(old)
            )
        if release.has("EnvFilesOption"):
            changes["env_files"] = base.env_files or env_file_key_ref_in_use(old)
        if release.has("UserNamespacesHostNetworkSupportOption"):
            changes["allow_user_namespaces_host_network_support"] = (
                old.get("hostUsers") is False and old.get("hostNetwork") is True
            )
        changes["allow_indivisible_huge_pages_values"] = uses_indivisible_huge_pages_values(old)
        changes["allow_invalid_label_value_in_selector"] = (
            has_invalid_label_value_in_affinity_selector(old, version)
        )
        changes["allow_invalid_label_value_in_required_node_affinity"] = (
            has_invalid_label_value_in_required_node_affinity(old, version)
        )
        changes["allow_invalid_topology_spread_constraint_label_selector"] = (
            has_invalid_topology_spread_constraint_label_selector(old, version)
        )
        if base.topology_selector_merge:
            changes["old_pod_violates_match_label_keys_validation"] = (
                has_invalid_topology_spread_constrain_match_label_keys(old, version)
            )
        else:
            changes["old_pod_violates_legacy_match_label_keys_validation"] = (
                has_legacy_invalid_topology_spread_constrain_match_label_keys(old, version)
            )
        changes["allow_non_local_projected_token_path"] = has_non_local_projected_token_path(old)
        changes["allow_namespaced_sysctls_for_host_net_and_host_ipc"] = any(
            validate_host_sysctl(name, old) for name in _sysctl_names(old)
        )
        if release.has("ContainerRestartRulesOption"):
            changes["container_restart_rules"] = (
                base.container_restart_rules or container_restart_rules_in_use(old)
            )
        if release.has("RestartAllContainersOption"):
            changes["restart_all_containers"] = (
                base.restart_all_containers or restart_all_containers_action_in_use(old)
            )
        changes["allow_user_namespaces_with_volume_devices"] = (
            has_user_namespaces_with_volume_devices(old)
        )
        changes["allow_existing_restart_container_for_non_sidecar_init_container"] = (
            has_restart_container_for_non_sidecar_init_container(old)
        )
        if base.image_reference_required:
            # AllowEmptyImageVolumeReference (1.37)
            changes["image_reference_required"] = not has_empty_image_volume_reference(old)
        if release.has("SysAdminWhenPrivilegeEscalationFalseOption"):
            changes["allow_sys_admin_when_privilege_escalation_false"] = (
                use_allow_sys_admin_when_privilege_escalation_false(old)
            )
    if old_pod_meta is not None and not base.allow_invalid_pod_deletion_cost:
        # This is an update: validate only if the existing object was valid.
        annotations = as_dict(old_pod_meta.get("annotations"))
        changes["allow_invalid_pod_deletion_cost"] = not valid_pod_deletion_cost(annotations)
    if not any(getattr(base, name) != value for name, value in changes.items()):
        return base  # most updates: nothing relaxed, the CREATE options (cached) again
    return replace(base, **changes)


def get_validation_options_from_pod_template(
    template: dict[str, Any] | None, old_template: dict[str, Any] | None, version: str
) -> PodOptions:
    """GetValidationOptionsFromPodTemplate (old_template None on CREATE)."""
    new = as_dict(template)
    old = None if old_template is None else as_dict(old_template)
    return get_validation_options_from_pod_spec_and_meta(
        as_dict(new.get("spec")),
        None if old is None else as_dict(old.get("spec")),
        as_dict(new.get("metadata")),
        None if old is None else as_dict(old.get("metadata")),
        version,
    )


# --- the helpers, in util.go's terms --------------------------------------------------------------


def _sysctl_names(spec: dict[str, Any]) -> Iterator[str]:
    for sysctl in as_list(as_dict(spec.get("securityContext")).get("sysctls")):
        name = as_dict(sysctl).get("name")
        if isinstance(name, str):
            yield name


def is_huge_page_resource_value_divisible(name: str, value: Any) -> bool:
    """helper.IsHugePageResourceValueDivisible (an unreadable size or value: not divisible)."""
    try:
        page = quantity_of(name[len(_HUGEPAGES) :])
        quantity = quantity_of(value)
    except QuantityError:
        return False
    if page.value <= 0:
        return False
    return quantity.scaled_value(0) % page.scaled_value(0) == 0


def _indivisible(entries: Any) -> bool:
    for name, value in as_dict(entries).items():
        if (
            isinstance(name, str)
            and name.startswith(_HUGEPAGES)
            and isinstance(value, str | int | float)
            and not isinstance(value, bool)
            and not is_huge_page_resource_value_divisible(name, value)
        ):
            return True
    return False


def uses_indivisible_huge_pages_values(spec: dict[str, Any]) -> bool:
    for container in containers(spec):
        resources = as_dict(container.get("resources"))
        if _indivisible(resources.get("limits")) or _indivisible(resources.get("requests")):
            return True
    return _indivisible(spec.get("overhead"))


def _affinity_terms(spec: dict[str, Any]) -> Iterator[dict[str, Any]]:
    affinity = as_dict(spec.get("affinity"))
    for kind in ("podAffinity", "podAntiAffinity"):
        block = as_dict(affinity.get(kind))
        for term in as_list(block.get("requiredDuringSchedulingIgnoredDuringExecution")):
            yield as_dict(term)
        for weighted in as_list(block.get("preferredDuringSchedulingIgnoredDuringExecution")):
            yield as_dict(as_dict(weighted).get("podAffinityTerm"))


def has_invalid_label_value_in_affinity_selector(spec: dict[str, Any], version: str) -> bool:
    """Any pod (anti-)affinity term's selectors fail ValidatePodAffinityTermSelector."""
    return any(
        validate_label_selector("", term.get(kind), LabelSelectorOptions(version), "")
        for term in _affinity_terms(spec)
        for kind in ("labelSelector", "namespaceSelector")
    )


def has_invalid_label_value_in_required_node_affinity(spec: dict[str, Any], version: str) -> bool:
    """helper.HasInvalidLabelValueInNodeSelectorTerms on the required node affinity."""
    required = as_dict(
        as_dict(as_dict(spec.get("affinity")).get("nodeAffinity")).get(
            "requiredDuringSchedulingIgnoredDuringExecution"
        )
    )
    for term in as_list(required.get("nodeSelectorTerms")):
        for expression in as_list(as_dict(term).get("matchExpressions")):
            for value in as_list(as_dict(expression).get("values")):
                if isinstance(value, str) and label_wording(version).value(value):
                    return True
    return False


def has_invalid_topology_spread_constraint_label_selector(
    spec: dict[str, Any], version: str
) -> bool:
    return any(
        validate_label_selector(
            "", as_dict(constraint).get("labelSelector"), LabelSelectorOptions(version), ""
        )
        for constraint in as_list(spec.get("topologySpreadConstraints"))
    )


def has_invalid_topology_spread_constrain_match_label_keys(
    spec: dict[str, Any], version: str
) -> bool:
    return _any_spread_constraint(
        spec,
        lambda keys, selector: bool(
            validate_match_label_keys_and_mismatch_label_keys("", "", keys, [], selector, version)
        ),
    )


def has_legacy_invalid_topology_spread_constrain_match_label_keys(
    spec: dict[str, Any], version: str
) -> bool:
    return _any_spread_constraint(
        spec,
        lambda keys, selector: bool(
            validate_match_label_keys_in_topology_spread("", "", keys, selector, version)
        ),
    )


def _any_spread_constraint(
    spec: dict[str, Any], invalid: Callable[[list[str], dict[str, Any] | None], bool]
) -> bool:
    """Whether `invalid` holds for the matchLabelKeys and labelSelector of a constraint."""
    for constraint in as_list(spec.get("topologySpreadConstraints")):
        constraint = as_dict(constraint)
        keys = [k for k in as_list(constraint.get("matchLabelKeys")) if isinstance(k, str)]
        selector = constraint.get("labelSelector")
        if invalid(keys, selector if isinstance(selector, dict) else None):
            return True
    return False


def has_non_local_projected_token_path(spec: dict[str, Any]) -> bool:
    """Any projected serviceAccountToken path fails ValidateLocalNonReservedPath."""
    for volume in as_list(spec.get("volumes")):
        for source in as_list(as_dict(as_dict(volume).get("projected")).get("sources")):
            token = as_dict(source).get("serviceAccountToken")
            if not isinstance(token, dict):
                continue
            path = text(token.get("path")) or ""
            if local_path_problems(path) or (path.startswith("..") and not path.startswith("../")):
                return True
    return False


def se_linux_change_policy_in_use(spec: dict[str, Any]) -> bool:
    return as_dict(spec.get("securityContext")).get("seLinuxChangePolicy") is not None


def taint_toleration_comparison_operators_in_use(spec: dict[str, Any]) -> bool:
    return any(as_dict(t).get("operator") in ("Lt", "Gt") for t in as_list(spec.get("tolerations")))


def env_file_key_ref_in_use(spec: dict[str, Any]) -> bool:
    """useAllowEnvFilesValidation's look at the old spec: any container's fileKeyRef."""
    return any(
        as_dict(as_dict(env).get("valueFrom")).get("fileKeyRef") is not None
        for container in containers(spec)
        for env in as_list(container.get("env"))
    )


def container_restart_rules_in_use(spec: dict[str, Any]) -> bool:
    for container in containers(spec, ("initContainers",)):
        policy = container.get("restartPolicy")
        if (policy is not None and policy != "Always") or as_list(
            container.get("restartPolicyRules")
        ):
            return True
    return any(c.get("restartPolicy") is not None for c in containers(spec, ("containers",)))


def _restarts_all(container: dict[str, Any]) -> bool:
    return any(
        as_dict(rule).get("action") == "RestartAllContainers"
        for rule in as_list(container.get("restartPolicyRules"))
    )


def restart_all_containers_action_in_use(spec: dict[str, Any]) -> bool:
    if any(_restarts_all(c) for c in containers(spec, ("containers",))):
        return True
    for container in containers(spec, ("initContainers",)):
        if _restarts_all(container):
            return True
        # The feature also allows sidecar containers to have rules.
        if container.get("restartPolicy") == "Always" and as_list(
            container.get("restartPolicyRules")
        ):
            return True
    return False


def has_user_namespaces_with_volume_devices(spec: dict[str, Any]) -> bool:
    if spec.get("hostUsers") is not False:
        return False
    return any(as_list(c.get("volumeDevices")) for c in containers(spec))


def has_restart_container_for_non_sidecar_init_container(spec: dict[str, Any]) -> bool:
    for container in containers(spec, ("initContainers",)):
        if container.get("restartPolicy") == "Always":
            continue
        if any(
            as_dict(p).get("restartPolicy") == "RestartContainer"
            for p in as_list(container.get("resizePolicy"))
        ):
            return True
    return False


def has_empty_image_volume_reference(spec: dict[str, Any]) -> bool:
    for volume in as_list(spec.get("volumes")):
        image = as_dict(volume).get("image")
        if isinstance(image, dict) and not text(image.get("reference")):
            return True
    return False


def use_allow_sys_admin_when_privilege_escalation_false(spec: dict[str, Any]) -> bool:
    """hasSysAdminAndPrivilegeEscalationFalse of any container (an unset
    allowPrivilegeEscalation counts as false)."""
    for container in containers(spec):
        context = container.get("securityContext")
        if not isinstance(context, dict) or context.get("allowPrivilegeEscalation") is True:
            continue
        capabilities = context.get("capabilities")
        if not isinstance(capabilities, dict):
            continue
        if "CAP_SYS_ADMIN" in as_list(capabilities.get("add")):
            return True
    return False


_DELETION_COST = re.compile(r"-[0-9]+|0|[1-9][0-9]*")


def valid_pod_deletion_cost(annotations: dict[str, Any]) -> bool:
    """helper.GetDeletionCostFromPodAnnotations succeeds: no sign but '-', no leading zero,
    a 32-bit integer."""
    value = annotations.get(POD_DELETION_COST)
    if value is None:
        return True
    if not isinstance(value, str) or _DELETION_COST.fullmatch(value) is None:
        return False
    return -(2**31) <= int(value) < 2**31
