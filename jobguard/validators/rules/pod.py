"""POD-001..POD-025: upstream's ValidatePodTemplateSpec on a Job's pod template
and a CronJob's `spec.jobTemplate.spec.template` (docs/RULES.md, "Pod template (POD)").

One pass over the template with upstream's skeleton: `validate_pod_template_spec` (the
template's labels and annotations, IM-008 and POD-026, then `validate_pod_spec`, then the
annotations against the fields), and `validate_pod_spec` calling its parts in ValidatePodSpec's
order, each named after the upstream function it ports, so errors come in the API server's
order and a release's diff upstream reads as a diff here. Values of the wrong JSON type are
left to decoding and the schema rules (SC): a rule here judges only what the API server could
have decoded. Fields the API server defaults (imagePullPolicy, port protocol, an empty
terminationMessagePolicy) are judged as defaulted.

Upstream: `pkg/apis/core/validation/validation.go` (ValidatePodTemplateSpec, ValidatePodSpec, validateContainers, validateResourceRequirements, validatePodResources), kubernetes v1.37.2 (git tag v1.37.2).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, NamedTuple

from jobguard.validators.cron import go_trim_space
from jobguard.validators.errors import ErrorType, FieldError, forbidden, invalid, not_supported
from jobguard.validators.errors import required as required_error
from jobguard.validators.names import (
    dns1123_label_problems,
    label_wording,
    port_name_problems,
    port_num_problems,
    qualified_name_problems,
)
from jobguard.validators.quantity import Quantity, QuantityError, quantity_of
from jobguard.validators.rules.metadata_update import validate_labels_and_annotations
from jobguard.validators.rules.pod_annotations import (
    validate_app_armor_annotations_and_fields_match_on_create,
    validate_pod_specific_annotations,
    validate_seccomp_annotations_and_fields,
)
from jobguard.validators.rules.pod_common import (
    CONTAINER_KINDS,
    PULL_POLICIES,
    PodOptions,
    go_string,
    pod_options,
)
from jobguard.validators.rules.pod_containers import (
    LIFECYCLE_AND_PROBES_ORDER,
    NOT_FOR_INIT,
    validate_container_restart_policy,
    validate_env,
    validate_env_from,
    validate_file_key_ref_volumes,
    validate_init_container_restart_policy,
    validate_lifecycle_and_probes,
    validate_no_ephemeral_containers_in_template,
    validate_pod_host_network_deps,
    validate_resize_policy,
    validate_termination_message_policy,
    validate_volume_devices,
    validate_volume_mounts,
)
from jobguard.validators.rules.pod_dns import (
    DNS_POLICIES,
    HOSTNAME_FIELDS,
    validate_dns_policy,
    validate_host_aliases,
    validate_hostname_and_subdomain,
    validate_pod_dns_config,
    validate_pod_host_name,
)
from jobguard.validators.rules.pod_resources import (
    gather_pod_resource_claim_names,
    validate_pod_resource_claims,
    validate_resource_claim_names,
)
from jobguard.validators.rules.pod_scheduling import (
    RESTART_POLICIES,
    validate_affinity,
    validate_node_selector_labels,
    validate_priority_fields,
    validate_readiness_gates,
    validate_restart_policy,
    validate_scheduling_gates,
    validate_service_account_node_name_and_deadline,
    validate_tolerations,
    validate_topology_spread_constraints,
)
from jobguard.validators.rules.pod_security import (
    validate_host_users,
    validate_os,
    validate_pod_spec_security_context,
    validate_security_context,
    validate_share_process_namespace,
    validate_windows_host_process_pod,
)
from jobguard.validators.rules.pod_volumes import validate_volume_source, volume_kind
from jobguard.validators.versions import DEFAULT_VERSION

PROTOCOLS = ["SCTP", "TCP", "UDP"]
_STANDARD_CONTAINER_RESOURCES = frozenset(("cpu", "memory", "ephemeral-storage"))
_STANDARD_RESOURCES = frozenset(
    (
        "cpu",
        "memory",
        "ephemeral-storage",
        "requests.cpu",
        "requests.memory",
        "requests.ephemeral-storage",
        "limits.cpu",
        "limits.memory",
        "limits.ephemeral-storage",
        "pods",
        "services",
        "replicationcontrollers",
        "resourcequotas",
        "secrets",
        "persistentvolumeclaims",
        "configmaps",
        "storage",
        "requests.storage",
        "services.nodeports",
        "services.loadbalancers",
    )
)
_INTEGER_RESOURCES = frozenset(
    (
        "pods",
        "services",
        "replicationcontrollers",
        "resourcequotas",
        "secrets",
        "configmaps",
        "persistentvolumeclaims",
        "services.nodeports",
        "services.loadbalancers",
    )
)
_QOS_RESOURCES = frozenset(("cpu", "memory"))
# resourcehelper.SupportedPodLevelResources(), as sets.List orders it.
_POD_LEVEL_RESOURCES = ["cpu", "hugepages-", "memory"]
HUGEPAGES_PREFIX = "hugepages-"


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _text(value: Any) -> str | None:
    """A string field as Go decodes it: absent or null is "", another type is not judged."""
    if value is None:
        return ""
    return value if isinstance(value, str) else None


def _int(value: Any) -> int | None:
    if value is None:
        return 0
    return value if isinstance(value, int) and not isinstance(value, bool) else None


# --- resource names (pkg/apis/core/helper) -------------------------------------------------------


def is_native_resource(name: str) -> bool:
    return "/" not in name or "kubernetes.io/" in name


def is_hugepages(name: str) -> bool:
    return name.startswith(HUGEPAGES_PREFIX)


def is_extended_resource(name: str) -> bool:
    if is_native_resource(name) or name.startswith("requests."):
        return False
    # Validity alone: the same in every release's words.
    return not qualified_name_problems("requests." + name)


def is_overcommit_allowed(name: str) -> bool:
    return is_native_resource(name) and not is_hugepages(name)


def _is_integer_resource(name: str) -> bool:
    return name in _INTEGER_RESOURCES or is_extended_resource(name)


def _resource_name_errors(
    name: str, path: str, version: str, pod_level: bool = False
) -> list[FieldError]:
    """validateContainerResourceName, or with `pod_level` validatePodResourceName (both with
    validateResourceName)."""
    rule = "POD-009"
    problems = label_wording(version).key(name)
    errors = [invalid(rule, path, name, problem) for problem in problems]
    unqualified = "/" not in name
    if not errors and unqualified and not (name in _STANDARD_RESOURCES or is_hugepages(name)):
        errors.append(
            invalid(rule, path, name, "must be a standard resource type or fully qualified")
        )
    if pod_level:
        if not errors and not (name in _QOS_RESOURCES or is_hugepages(name)):
            errors.append(not_supported(rule, path, name, _POD_LEVEL_RESOURCES))
        return errors
    if unqualified:
        if not (name in _STANDARD_CONTAINER_RESOURCES or is_hugepages(name)):
            errors.append(invalid(rule, path, name, "must be a standard resource for containers"))
    elif not is_native_resource(name) and not is_extended_resource(name):
        errors.append(invalid(rule, path, name, "doesn't follow extended resource name standard"))
    return errors


def validate_resource_quantity_value(
    name: str, quantity: Quantity, path: str, indivisible_ok: bool
) -> list[FieldError]:
    """ValidateResourceQuantityValue and the hugepages size check."""
    rule = "POD-009"
    errors: list[FieldError] = []
    text = str(quantity)
    if quantity.value < 0:
        errors.append(invalid(rule, path, text, "must be greater than or equal to 0"))
    if _is_integer_resource(name) and quantity.scaled_value(-3) % 1000 != 0:
        errors.append(invalid(rule, path, text, "must be an integer"))
    # AllowIndivisibleHugePagesValues: the stored template had such a value.
    if not indivisible_ok and is_hugepages(name) and not _divisible_hugepages(name, quantity):
        errors.append(
            invalid(rule, path, text, f"{text} is not positive integer multiple of {name}")
        )
    return errors


def _divisible_hugepages(name: str, quantity: Quantity) -> bool:
    try:
        page = quantity_of(name[len(HUGEPAGES_PREFIX) :])
    except QuantityError:
        return False
    if page.value <= 0 or page.scaled_value(-3) % 1000 != 0:
        return False
    return quantity.scaled_value(0) % page.scaled_value(0) == 0


def _parsed(
    entries: dict[str, Any], path: str, errors: list[FieldError], create: bool
) -> dict[str, Quantity]:
    """The quantities of a limits or requests map that parse; on CREATE the others are
    reported (on UPDATE the stored object's quantities parsed, and a change is TM-001's)."""
    out: dict[str, Quantity] = {}
    for name, raw in entries.items():
        if isinstance(raw, bool) or not isinstance(raw, str | int | float):
            continue  # a type error: the schema rules report it
        try:
            out[name] = quantity_of(raw)
        except QuantityError as exc:
            if create:
                errors.append(invalid("POD-009", f"{path}[{name}]", raw, str(exc)))
    return out


_Scalar = str | int | float | bool | None


def _items(entries: dict[str, Any]) -> tuple[tuple[str, _Scalar], ...] | None:
    """A hashable copy of a limits or requests map, or None when a value is not a string or
    number (True == 1 as a key: booleans must not share a cache entry with numbers)."""
    items = tuple(entries.items())
    for _, value in items:
        if isinstance(value, dict | list | bool):
            return None
    return items


_MAX_KEPT_RESOURCE_CHARS = 1024
"""The longest resource block (names and string values) kept by `_cached_resources`: 4,096
entries of it hold a few MiB at most."""


def _chars(items: tuple[tuple[str, _Scalar], ...]) -> int:
    return sum(len(name) + (len(value) if isinstance(value, str) else 8) for name, value in items)


def validate_resource_requirements(
    resources: Any,
    path: str,
    create: bool,
    version: str,
    indivisible_ok: bool = False,
    pod_level: bool = False,
) -> list[FieldError]:
    """validateResourceRequirements for one container (claims are not covered); resource names
    in the words of release `version`."""
    requirements = _dict(resources)
    limits_raw = _dict(requirements.get("limits"))
    requests_raw = _dict(requirements.get("requests"))
    if not limits_raw and not requests_raw:
        return []
    limits_items, requests_items = _items(limits_raw), _items(requests_raw)
    if (
        limits_items is not None
        and requests_items is not None
        and _chars(limits_items) + _chars(requests_items) <= _MAX_KEPT_RESOURCE_CHARS
    ):
        # Manifests repeat the same few resource blocks: each is judged once per path (kept
        # only when short: a client's distinct 1 MiB resource names must not be kept).
        return list(
            _cached_resources(
                limits_items, requests_items, path, create, version, indivisible_ok, pod_level
            )
        )
    return _validate_resource_requirements(
        limits_raw, requests_raw, path, create, version, indivisible_ok, pod_level
    )


@lru_cache(maxsize=4096)
def _cached_resources(
    limits: tuple[tuple[str, _Scalar], ...],
    requests: tuple[tuple[str, _Scalar], ...],
    path: str,
    create: bool,
    version: str,
    indivisible_ok: bool,
    pod_level: bool,
) -> tuple[FieldError, ...]:
    return tuple(
        _validate_resource_requirements(
            dict(limits), dict(requests), path, create, version, indivisible_ok, pod_level
        )
    )


def _validate_resource_requirements(
    limits_raw: dict[str, Any],
    requests_raw: dict[str, Any],
    path: str,
    create: bool,
    version: str,
    indivisible_ok: bool,
    pod_level: bool = False,
) -> list[FieldError]:
    """The checks themselves, on the two maps."""
    errors: list[FieldError] = []
    limits_path, requests_path = f"{path}.limits", f"{path}.requests"
    limits = _parsed(limits_raw, limits_path, errors, create)
    requests = _parsed(requests_raw, requests_path, errors, create)
    qos, hugepages = False, False
    for name in limits_raw:
        entry = f"{limits_path}[{name}]"
        errors += _resource_name_errors(name, entry, version, pod_level)
        if name in limits:
            errors += validate_resource_quantity_value(name, limits[name], entry, indivisible_ok)
        hugepages |= is_hugepages(name)
        qos |= name in _QOS_RESOURCES
    for name in requests_raw:
        entry = f"{requests_path}[{name}]"
        errors += _resource_name_errors(name, entry, version, pod_level)
        if name in requests:
            errors += validate_resource_quantity_value(name, requests[name], entry, indivisible_ok)
            errors += _request_against_limit(name, requests[name], limits, limits_raw, path)
        hugepages |= is_hugepages(name)
        qos |= name in _QOS_RESOURCES
    if hugepages and not qos:
        errors.append(forbidden("POD-010", path, "HugePages require cpu or memory"))
    return errors


def _request_against_limit(
    name: str,
    request: Quantity,
    limits: dict[str, Quantity],
    limits_raw: dict[str, Any],
    path: str,
) -> list[FieldError]:
    rule = "POD-010"
    overcommit = is_overcommit_allowed(name)
    if name not in limits_raw:
        if overcommit:
            return []
        detail = "Limit must be set for non overcommitable resources"
        return [required_error(rule, f"{path}.limits", detail)]
    limit = limits.get(name)
    if limit is None:
        return []  # the limit does not parse: reported already
    order = request.compare(limit)
    if order != 0 and not overcommit:
        detail = f"must be equal to {name} limit of {limit}"
        return [invalid(rule, f"{path}.requests", str(request), detail)]
    if order > 0:
        detail = f"must be less than or equal to {name} limit of {limit}"
        return [invalid(rule, f"{path}.requests", str(request), detail)]
    return []


# --- pod-level resources (PodLevelResources, from 1.34) --------------------------------------------


def validate_pod_resources(
    spec: dict[str, Any], path: str, options: PodOptions
) -> list[FieldError]:
    """validatePodResources: the pod's own `resources` (`path` is the pod spec's)."""
    resources = spec.get("resources")
    if resources is None or not isinstance(resources, dict):
        return []
    at = f"{path}.resources"
    if _dict(spec.get("os")).get("name") == "windows":
        return [forbidden("POD-010", at, "may not be set for a windows pod")]
    errors: list[FieldError] = []
    if resources.get("claims") is not None:
        detail = "claims may not be set for Resources at pod-level"
        errors.append(forbidden("POD-010", f"{at}.claims", detail))
    errors += validate_resource_requirements(
        resources,
        at,
        True,
        options.version,
        options.allow_indivisible_huge_pages_values,
        pod_level=True,
    )
    return errors + validate_pod_resource_consistency(spec, resources, at)


def _quantities(entries: Any) -> dict[str, Quantity]:
    out: dict[str, Quantity] = {}
    for name, raw in _dict(entries).items():
        if isinstance(raw, str | int | float) and not isinstance(raw, bool):
            try:
                out[name] = quantity_of(raw)
            except QuantityError:
                continue  # reported by the decoder and POD-009
    return out


def add_resource_list(total: dict[str, Quantity], more: dict[str, Quantity]) -> None:
    """addResourceList (a sum keeps the first quantity's format, as Quantity.Add does)."""
    for name, quantity in more.items():
        found = total.get(name)
        total[name] = (
            quantity if found is None else Quantity(found.value + quantity.value, found.format)
        )


def max_resource_list(total: dict[str, Quantity], more: dict[str, Quantity]) -> None:
    """maxResourceList."""
    for name, quantity in more.items():
        found = total.get(name)
        if found is None or quantity.compare(found) > 0:
            total[name] = quantity


def aggregate_container_resources(spec: dict[str, Any], kind: str) -> dict[str, Quantity]:
    """resourcehelper.AggregateContainerRequests or ...Limits (`kind` "requests" or
    "limits") of a template: the containers' sum, then the init containers' peak (each with the
    restartable init containers before it), sidecars added to the sum."""
    result: dict[str, Quantity] = {}
    for container in _list(spec.get("containers")):
        add_resource_list(result, _quantities(_dict(_dict(container).get("resources")).get(kind)))
    sidecars: dict[str, Quantity] = {}
    init_peak: dict[str, Quantity] = {}
    for container in _list(spec.get("initContainers")):
        container = _dict(container)
        own = _quantities(_dict(container.get("resources")).get(kind))
        if container.get("restartPolicy") == "Always":
            add_resource_list(result, own)
            add_resource_list(sidecars, own)
            use = dict(sidecars)
        else:
            use = dict(own)
            add_resource_list(use, sidecars)
        max_resource_list(init_peak, use)
    max_resource_list(result, init_peak)
    return result


def validate_pod_resource_consistency(
    spec: dict[str, Any], resources: dict[str, Any], path: str
) -> list[FieldError]:
    """validatePodResourceConsistency (`path` is the pod's resources'). Upstream walks the
    aggregate maps in Go's random order; here the resources are taken in name order."""
    rule = "POD-010"
    errors: list[FieldError] = []
    pod_requests = _quantities(resources.get("requests"))
    pod_limits = _quantities(resources.get("limits"))
    aggregate = aggregate_container_resources(spec, "requests")
    for name in sorted(aggregate):
        own = pod_requests.get(name)
        if own is not None and aggregate[name].compare(own) > 0:
            detail = f"must be greater than or equal to aggregate container requests of {aggregate[name]}"
            errors.append(invalid(rule, f"{path}.requests[{name}]", str(own), detail))
    aggregate = aggregate_container_resources(spec, "limits")
    for name in sorted(aggregate):
        own = pod_limits.get(name)
        if is_hugepages(name) and own is not None and aggregate[name].compare(own) > 0:
            detail = (
                f"must be greater than or equal to aggregate container limits of {aggregate[name]}"
            )
            errors.append(invalid(rule, f"{path}.limits[{name}]", str(own), detail))
    for index, container in enumerate(_list(spec.get("containers"))):
        limits = _quantities(_dict(_dict(container).get("resources")).get("limits"))
        for name in sorted(limits):
            own = pod_limits.get(name)
            if own is not None and limits[name].compare(own) > 0:
                detail = f"must be less than or equal to pod limits of {own}"
                at = f"{path}.containers[{index}][{name}].limits"
                errors.append(invalid(rule, at, str(limits[name]), detail))
    return errors


# --- containers ----------------------------------------------------------------------------------


def validate_container_ports(ports: Any, path: str) -> list[FieldError]:
    """validateContainerPorts."""
    errors: list[FieldError] = []
    names: set[str] = set()
    for index, port in enumerate(_list(ports)):
        if not isinstance(port, dict):
            continue
        at = f"{path}[{index}]"
        name = _text(port.get("name"))
        if name:
            problems = port_name_problems(name)
            errors += [invalid("POD-005", f"{at}.name", name, problem) for problem in problems]
            if not problems and name in names:
                errors.append(FieldError("POD-005", f"{at}.name", ErrorType.DUPLICATE, value=name))
            elif not problems:
                names.add(name)
        container_port = _int(port.get("containerPort"))
        if container_port == 0:
            errors.append(required_error("POD-005", f"{at}.containerPort"))
        elif container_port is not None:
            for problem in port_num_problems(container_port):
                errors.append(invalid("POD-005", f"{at}.containerPort", container_port, problem))
        host_port = _int(port.get("hostPort"))
        if host_port:
            for problem in port_num_problems(host_port):
                errors.append(invalid("POD-005", f"{at}.hostPort", host_port, problem))
        protocol = _text(port.get("protocol"))
        if protocol and protocol not in PROTOCOLS:
            errors.append(not_supported("POD-005", f"{at}.protocol", protocol, PROTOCOLS))
    return errors


def check_host_port_conflicts(containers: list[Any], path: str) -> list[FieldError]:
    """AccumulateUniqueHostPorts: protocol/hostIP/hostPort once per pod (per init container)."""
    errors: list[FieldError] = []
    seen: set[str] = set()
    for index, container in enumerate(containers):
        for port_index, port in enumerate(_list(_dict(container).get("ports"))):
            port = _dict(port)
            host_port = _int(port.get("hostPort"))
            if not host_port:
                continue
            protocol = _text(port.get("protocol")) or "TCP"
            key = f"{protocol}/{_text(port.get('hostIP')) or ''}/{host_port}"
            if key in seen:
                at = f"{path}[{index}].ports[{port_index}].hostPort"
                errors.append(FieldError("POD-005", at, ErrorType.DUPLICATE, value=key))
            seen.add(key)
    return errors


def validate_container_common(
    container: dict[str, Any], pod: _Pod, path: str, create: bool
) -> list[FieldError]:
    """validateContainerCommon, in upstream's order."""
    errors: list[FieldError] = []
    options = pod.options
    name = _text(container.get("name"))
    if name == "":
        errors.append(required_error("POD-002", f"{path}.name"))
    elif name is not None:
        for problem in dns1123_label_problems(name):
            errors.append(invalid("POD-002", f"{path}.name", name, problem))
    if _text(container.get("image")) == "":
        errors.append(required_error("POD-003", f"{path}.image"))
    if "terminationMessagePolicy" in container:
        errors += validate_termination_message_policy(
            container["terminationMessagePolicy"], f"{path}.terminationMessagePolicy"
        )
    errors += validate_container_ports(container.get("ports"), f"{path}.ports")
    if "env" in container:
        errors += validate_env(container["env"], f"{path}.env", options, pod.file_refs)
    if "envFrom" in container:
        errors += validate_env_from(container["envFrom"], f"{path}.envFrom", options)
    if "volumeMounts" in container:
        errors += validate_volume_mounts(container, pod.volumes, f"{path}.volumeMounts")
    if "volumeDevices" in container:
        errors += validate_volume_devices(container, pod.volumes, f"{path}.volumeDevices")
    policy = _text(container.get("imagePullPolicy"))
    if policy and policy not in PULL_POLICIES:
        errors.append(not_supported("POD-004", f"{path}.imagePullPolicy", policy, PULL_POLICIES))
    errors += validate_resource_requirements(
        container.get("resources"),
        f"{path}.resources",
        create,
        options.version,
        options.allow_indivisible_huge_pages_values,
    )
    resources = container.get("resources")
    if isinstance(resources, dict) and "claims" in resources:
        errors += validate_resource_claim_names(
            resources["claims"], f"{path}.resources.claims", pod.claims, options
        )
    if "resizePolicy" in container:
        errors += validate_resize_policy(
            container["resizePolicy"], f"{path}.resizePolicy", pod.restart_policy, options
        )
    if "securityContext" in container:
        errors += validate_security_context(
            container["securityContext"],
            f"{path}.securityContext",
            pod.host_users,
            options.allow_sys_admin_when_privilege_escalation_false,
        )
    return errors


def validate_containers(
    containers: list[Any], pod: _Pod, path: str, create: bool
) -> list[FieldError]:
    """validateContainers: at least one, names unique, host ports unique across them."""
    if not containers:
        return [required_error("POD-001", path)]
    errors: list[FieldError] = []
    names: set[Any] = set()
    for index, container in enumerate(containers):
        if not isinstance(container, dict):
            continue
        at = f"{path}[{index}]"
        errors += validate_container_common(container, pod, at, create)
        name = _text(container.get("name"))
        if name is not None and name in names:
            errors.append(FieldError("POD-002", f"{at}.name", ErrorType.DUPLICATE, value=name))
        names.add(name)
        errors += validate_lifecycle_and_probes(container, pod.grace, at)
        if pod.options.container_restart_rules:
            if "restartPolicy" in container or "restartPolicyRules" in container:
                errors += validate_container_restart_policy(container, at, pod.options)
        elif container.get("restartPolicy") is not None:
            # restartPolicyRules are dropped before validation while the gate is off.
            detail = "may not be set for non-init containers"
            errors.append(forbidden("POD-012", f"{at}.restartPolicy", detail))
    return errors + check_host_port_conflicts(containers, path)


def validate_init_containers(
    init: list[Any], regular: list[Any], pod: _Pod, path: str, create: bool
) -> list[FieldError]:
    """validateInitContainers: names unique across init and regular containers."""
    errors: list[FieldError] = []
    names = {_text(_dict(container).get("name")) for container in regular}
    for index, container in enumerate(init):
        if not isinstance(container, dict):
            continue
        at = f"{path}[{index}]"
        errors += validate_container_common(container, pod, at, create)
        errors += validate_init_container_restart_policy(container, at, pod.options)
        name = _text(container.get("name"))
        if name is not None and name in names:
            errors.append(FieldError("POD-002", f"{at}.name", ErrorType.DUPLICATE, value=name))
        elif name:
            names.add(name)
        # Upstream checks each init container's host ports alone (and names it index 0).
        errors += check_host_port_conflicts([container], path)
        sidecar = container.get("restartPolicy") == "Always"
        if sidecar:
            errors += validate_lifecycle_and_probes(container, pod.grace, at)
        else:
            for name in LIFECYCLE_AND_PROBES_ORDER:
                if container.get(name) is not None:
                    errors.append(forbidden("POD-012", f"{at}.{name}", NOT_FOR_INIT))
        # AllowSidecarResizePolicy is on in every supported release.
        if (
            not sidecar
            and pod.options.newest_resize_policy
            and not pod.options.allow_existing_restart_container_for_non_sidecar_init_container
        ):
            for policy_index, entry in enumerate(_list(container.get("resizePolicy"))):
                if _dict(entry).get("restartPolicy") == "RestartContainer":
                    policy_at = f"{at}.resizePolicy[{policy_index}].restartPolicy"
                    detail = "must not be set to 'RestartContainer' for non-sidecar initContainers"
                    errors.append(invalid("POD-013", policy_at, "RestartContainer", detail))
    return errors


# EphemeralContainerCommon's fields in their order (pkg/apis/core/types.go, v1.37.2): those
# allowedEphemeralContainerFields does not allow "cannot be set for an Ephemeral Container".
_NOT_FOR_EPHEMERAL = (
    "ports",
    "resources",
    "resizePolicy",
    "restartPolicy",
    "restartPolicyRules",
    "livenessProbe",
    "readinessProbe",
    "startupProbe",
    "lifecycle",
)
NOT_FOR_EPHEMERAL = "cannot be set for an Ephemeral Container"


def _set_in_go(field: str, value: Any) -> bool:
    """Whether the decoded field differs from its Go zero value (validateFieldAllowList's
    reflect.DeepEqual): a list or an object that is present is set, even empty, and so is every
    pointer; a ResourceRequirements is set when one of its members is."""
    if field == "resources":
        members = ("limits", "requests", "claims")
        return isinstance(value, dict) and any(value.get(k) is not None for k in members)
    return value is not None


def validate_ephemeral_containers(
    ephemeral: list[Any], regular: list[Any], init: list[Any], pod: _Pod, path: str, create: bool
) -> list[FieldError]:
    """validateEphemeralContainers, which ValidatePodSpec runs on a template too (before
    ValidatePodTemplateSpec refuses the list whole): each container's common checks and
    validateContainerOnlyForPod, names unique across every kind, the target among the regular
    and init containers, only the allowed fields set, no subPath or subPathExpr."""
    errors: list[FieldError] = []
    others = {go_string(_dict(container).get("name")) for container in (*regular, *init)}
    names = set(others)
    for index, container in enumerate(ephemeral):
        if not isinstance(container, dict):
            continue
        at = f"{path}[{index}]"
        errors += validate_container_common(container, pod, at, create)
        image = container.get("image")
        if isinstance(image, str) and go_trim_space(image) != image:
            detail = "must not have leading or trailing whitespace"
            errors.append(invalid("POD-003", f"{at}.image", image, detail))
        name = go_string(container.get("name"))
        if name in names:
            errors.append(FieldError("POD-002", f"{at}.name", ErrorType.DUPLICATE, value=name))
        else:
            names.add(name)
        target = go_string(container.get("targetContainerName"))
        if target and target not in others:
            errors.append(
                FieldError(
                    "POD-017", f"{at}.targetContainerName", ErrorType.NOT_FOUND, value=target
                )
            )
        for field in _NOT_FOR_EPHEMERAL:
            if _set_in_go(field, container.get(field)):
                errors.append(forbidden("POD-017", f"{at}.{field}", NOT_FOR_EPHEMERAL))
        for mount_index, mount in enumerate(_list(container.get("volumeMounts"))):
            for key in ("subPath", "subPathExpr"):
                if go_string(_dict(mount).get(key)):
                    mount_at = f"{at}.volumeMounts[{mount_index}].{key}"
                    errors.append(forbidden("POD-017", mount_at, NOT_FOR_EPHEMERAL))
    return errors


def validate_volumes(
    volumes: list[Any], path: str, options: PodOptions
) -> tuple[dict[str, str], list[FieldError]]:
    """ValidateVolumes: sources (POD-015), names valid and unique (POD-007); a volume with no
    error can be mounted (the result maps its name to its source)."""
    errors: list[FieldError] = []
    valid: dict[str, str] = {}
    for index, volume in enumerate(volumes):
        if not isinstance(volume, dict):
            continue
        at = f"{path}[{index}].name"
        name = _text(volume.get("name"))
        if name is None:
            continue
        kind, problems = validate_volume_source(volume, f"{path}[{index}]", options)
        if name == "":
            problems.append(required_error("POD-007", at))
        else:
            problems += [invalid("POD-007", at, name, p) for p in dns1123_label_problems(name)]
        if name in valid:
            problems.append(FieldError("POD-007", at, ErrorType.DUPLICATE, value=name))
        if problems:
            errors += problems
        else:
            valid[name] = kind
    return valid, errors


_NO_CLAIMS: frozenset[str] = frozenset()


class _Pod(NamedTuple):
    """What the container checks need of the pod spec."""

    volumes: dict[str, str]
    options: PodOptions
    grace: int | None
    restart_policy: str
    host_users: bool
    file_refs: list[str]
    claims: frozenset[str]
    """The names of the pod's resource claims."""
    """Filled by the container checks: the env entries with a fileKeyRef."""


def validate_pod_template_spec(
    template: Any,
    path: str,
    opts: PodOptions | None = None,
    *,
    create: bool,
    version: str = DEFAULT_VERSION,
) -> list[FieldError]:
    """ValidatePodTemplateSpec for the template at `path`, as the API server of `version`
    judges it (with its default feature gates).

    `opts`: upstream's PodValidationOptions of the request
    (`pod_util.get_validation_options_from_pod_template`, from the old and the new template on
    UPDATE); the CREATE options of `version` when None. `create`: the request creates the
    object (on UPDATE a quantity that does not parse is not reported here: the stored object's
    parsed).
    """
    template = _dict(template)
    meta = _dict(template.get("metadata"))
    spec = _dict(template.get("spec"))
    if opts is None:
        opts = pod_options(version)
    # ValidateLabels, ValidateAnnotations.
    errors = validate_labels_and_annotations(meta, None, path, opts.version)
    # Every pod-specific annotation check reads an annotation: most templates have none.
    annotations = meta.get("annotations")
    has_annotations = isinstance(annotations, dict) and bool(annotations)
    if isinstance(annotations, dict) and annotations:  # (narrows the type for mypy)
        errors += validate_pod_specific_annotations(annotations, spec, f"{path}.annotations", opts)
    at = f"{path}.spec"
    errors += validate_pod_spec(spec, None, at, opts, create=create)
    if has_annotations:
        errors += validate_seccomp_annotations_and_fields(meta, spec, at)
        errors += validate_app_armor_annotations_and_fields_match_on_create(meta, spec, at)
    if "ephemeralContainers" in spec:
        errors += validate_no_ephemeral_containers_in_template(
            spec["ephemeralContainers"], f"{at}.ephemeralContainers"
        )
    return errors


# The values needing no check: the valid ones and unset (defaulted).
_DNS_POLICIES = frozenset((*DNS_POLICIES, "", None))
_RESTART_POLICIES = frozenset((*RESTART_POLICIES, "", None))
_SECURITY_KEYS = frozenset(("securityContext", "shareProcessNamespace"))
_IDENTITY_KEYS = frozenset(("serviceAccountName", "nodeName", "activeDeadlineSeconds"))
_NAME_KEYS = frozenset(HOSTNAME_FIELDS)
_PRIORITY_KEYS = frozenset(("priorityClassName", "runtimeClassName", "preemptionPolicy"))


def validate_pod_spec(
    spec: dict[str, Any],
    pod_meta: dict[str, Any] | None,
    path: str,
    opts: PodOptions,
    *,
    create: bool = True,
) -> list[FieldError]:
    """ValidatePodSpec: its parts in upstream's order, so errors come in the API server's order.

    `pod_meta` is upstream's podMeta (None for a template: ValidateVolumes and
    validatePodResourceClaims take it for a pod's own name). A part runs only when a field it
    reads is set: most templates set few of them, and for an unset field upstream's part finds
    nothing either (each guard checked against v1.37.2; fields the API server defaults are
    judged as defaulted, an empty or null one too). Not ported, as the API server never
    sees them in a Job's template: terminationGracePeriodSeconds required (defaulted to 30),
    validateImagePullSecrets (a reference holds only a name after decoding),
    deprecatedServiceAccount (defaulting keeps it equal to serviceAccountName), schedulingGroup
    (alpha: dropped while its gate is off).
    """
    errors: list[FieldError] = []
    grace = spec.get("terminationGracePeriodSeconds")
    if grace is None:
        grace = 30  # SetDefaults_PodSpec, for an unset or null one
    volumes, volume_errors = validate_volumes(_list(spec.get("volumes")), f"{path}.volumes", opts)
    errors += volume_errors
    if "resourceClaims" in spec:
        errors += validate_pod_resource_claims(
            spec["resourceClaims"], f"{path}.resourceClaims", opts
        )
    pod = _Pod(  # positional: this runs for every template
        volumes,
        opts,
        grace if isinstance(grace, int) and not isinstance(grace, bool) else None,
        spec.get("restartPolicy") or "Always",
        spec.get("hostUsers") is not False,
        [],
        gather_pod_resource_claim_names(spec, opts) if "resourceClaims" in spec else _NO_CLAIMS,
    )
    containers = _list(spec.get("containers"))
    errors += validate_containers(containers, pod, f"{path}.containers", create)
    init = _list(spec.get("initContainers"))
    errors += validate_init_containers(init, containers, pod, f"{path}.initContainers", create)
    if spec.get("ephemeralContainers"):
        errors += validate_ephemeral_containers(
            _list(spec["ephemeralContainers"]),
            containers,
            init,
            pod,
            f"{path}.ephemeralContainers",
            create,
        )
    if opts.pod_level_resources and "resources" in spec:
        errors += validate_pod_resources(spec, path, opts)
    if spec.get("hostNetwork") is True:
        errors += validate_pod_host_network_deps(spec, path, opts)
    if spec.get("restartPolicy") not in _RESTART_POLICIES:
        errors += validate_restart_policy(spec["restartPolicy"], f"{path}.restartPolicy", opts)
    if spec.get("dnsPolicy") not in _DNS_POLICIES:
        errors += validate_dns_policy(spec["dnsPolicy"], f"{path}.dnsPolicy", opts)
    if "nodeSelector" in spec:
        errors += validate_node_selector_labels(spec["nodeSelector"], f"{path}.nodeSelector", opts)
    if not _SECURITY_KEYS.isdisjoint(spec):
        errors += validate_pod_spec_security_context(spec, path, opts)
    if opts.share_process_namespace_last and spec.get("shareProcessNamespace") is True:
        # From 1.37 its own step (validateShareProcessNamespace); before, inside the above.
        errors += validate_share_process_namespace(spec, path)
    if "affinity" in spec:
        errors += validate_affinity(spec["affinity"], opts, f"{path}.affinity")
    if "dnsConfig" in spec or spec.get("dnsPolicy") == "None":
        errors += validate_pod_dns_config(spec, f"{path}.dnsConfig", opts)
    if "readinessGates" in spec:
        errors += validate_readiness_gates(spec["readinessGates"], f"{path}.readinessGates", opts)
    if "schedulingGates" in spec:
        errors += validate_scheduling_gates(
            spec["schedulingGates"], f"{path}.schedulingGates", opts
        )
    if "topologySpreadConstraints" in spec:
        errors += validate_topology_spread_constraints(
            spec["topologySpreadConstraints"], f"{path}.topologySpreadConstraints", opts
        )
    if _has_windows_options(spec):
        errors += validate_windows_host_process_pod(spec, path)
    if spec.get("hostUsers") is False:
        errors += validate_host_users(spec, path, opts)
    if "hostnameOverride" in spec:
        errors += validate_pod_host_name(spec, path, opts)
    if not _IDENTITY_KEYS.isdisjoint(spec):
        errors += validate_service_account_node_name_and_deadline(spec, path, opts)
    if not _NAME_KEYS.isdisjoint(spec):
        errors += validate_hostname_and_subdomain(spec, path, opts)
    if "tolerations" in spec:
        errors += validate_tolerations(spec["tolerations"], f"{path}.tolerations", opts)
    if "hostAliases" in spec:
        errors += validate_host_aliases(spec["hostAliases"], f"{path}.hostAliases", opts)
    if not _PRIORITY_KEYS.isdisjoint(spec):
        errors += validate_priority_fields(spec, path, opts)
    if spec.get("overhead"):
        # validateOverhead: the container checks, on a ResourceRequirements of these limits.
        errors += validate_resource_requirements(
            {"limits": spec["overhead"]},
            f"{path}.overhead",
            True,
            opts.version,
            opts.allow_indivisible_huge_pages_values,
        )
    if "os" in spec:
        errors += validate_os(spec, path, opts)
    if opts.env_files and pod.file_refs:
        kinds = _volume_kinds(spec, opts)
        for kind in ("initContainers", "containers"):
            errors += validate_file_key_ref_volumes(
                _list(spec.get(kind)), f"{path}.{kind}", kinds, opts
            )
    return errors


def _has_windows_options(spec: dict[str, Any]) -> bool:
    """Whether the pod or a container sets windowsOptions (hostProcess lives there)."""
    if isinstance(_dict(spec.get("securityContext")).get("windowsOptions"), dict):
        return True
    return any(
        isinstance(_dict(_dict(c).get("securityContext")).get("windowsOptions"), dict)
        for kind in CONTAINER_KINDS
        for c in _list(spec.get(kind))
    )


def _volume_kinds(spec: dict[str, Any], options: PodOptions) -> dict[str, str]:
    return {
        volume["name"]: volume_kind(volume, options)
        for volume in _list(spec.get("volumes"))
        if isinstance(volume, dict) and isinstance(volume.get("name"), str)
    }
