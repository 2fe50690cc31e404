"""POD-001..POD-010: the essentials of upstream's ValidatePodTemplateSpec on a Job's pod template
and a CronJob's `spec.jobTemplate.spec.template` (docs/RULES.md, "Pod template (POD)").

One pass over the template, in upstream's order: template labels and annotations (IM-008),
volumes, containers, then init containers. Values of the wrong JSON type are left to decoding
and the schema rules (SC): a rule here judges only what the API server could have decoded.
Fields the API server defaults (imagePullPolicy, port protocol) are judged as defaulted.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from jobguard.validators.errors import ErrorType, FieldError, forbidden, invalid, not_supported
from jobguard.validators.errors import required as required_error
from jobguard.validators.names import (
    dns1123_label_problems,
    port_name_problems,
    port_num_problems,
    qualified_name_problems,
    relaxed_env_var_name_problems,
)
from jobguard.validators.quantity import Quantity, QuantityError, quantity_of
from jobguard.validators.rules.metadata_update import check_labels_and_annotations

PULL_POLICIES = ["Always", "IfNotPresent", "Never"]
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
    return not qualified_name_problems("requests." + name)


def is_overcommit_allowed(name: str) -> bool:
    return is_native_resource(name) and not is_hugepages(name)


def _is_integer_resource(name: str) -> bool:
    return name in _INTEGER_RESOURCES or is_extended_resource(name)


def _resource_name_errors(name: str, path: str) -> list[FieldError]:
    """validateContainerResourceName (with validateResourceName)."""
    rule = "POD-009"
    errors = [invalid(rule, path, name, problem) for problem in qualified_name_problems(name)]
    unqualified = "/" not in name
    if not errors and unqualified and not (name in _STANDARD_RESOURCES or is_hugepages(name)):
        errors.append(
            invalid(rule, path, name, "must be a standard resource type or fully qualified")
        )
    if unqualified:
        if not (name in _STANDARD_CONTAINER_RESOURCES or is_hugepages(name)):
            errors.append(invalid(rule, path, name, "must be a standard resource for containers"))
    elif not is_native_resource(name) and not is_extended_resource(name):
        errors.append(invalid(rule, path, name, "doesn't follow extended resource name standard"))
    return errors


def _quantity_value_errors(
    name: str, quantity: Quantity, path: str, create: bool
) -> list[FieldError]:
    """ValidateResourceQuantityValue and the hugepages size check."""
    rule = "POD-009"
    errors: list[FieldError] = []
    text = str(quantity)
    if quantity.value < 0:
        errors.append(invalid(rule, path, text, "must be greater than or equal to 0"))
    if _is_integer_resource(name) and quantity.scaled_value(-3) % 1000 != 0:
        errors.append(invalid(rule, path, text, "must be an integer"))
    # Upstream tolerates indivisible values on UPDATE when the stored template had them.
    if create and is_hugepages(name) and not _divisible_hugepages(name, quantity):
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


def check_resources(resources: Any, path: str, create: bool) -> list[FieldError]:
    """validateResourceRequirements for one container (claims are not covered)."""
    requirements = _dict(resources)
    limits_raw = _dict(requirements.get("limits"))
    requests_raw = _dict(requirements.get("requests"))
    if not limits_raw and not requests_raw:
        return []
    limits_items, requests_items = _items(limits_raw), _items(requests_raw)
    if limits_items is not None and requests_items is not None:
        # Manifests repeat the same few resource blocks: each is judged once per path.
        return list(_cached_resources(limits_items, requests_items, path, create))
    return _check_resources(limits_raw, requests_raw, path, create)


@lru_cache(maxsize=4096)
def _cached_resources(
    limits: tuple[tuple[str, _Scalar], ...],
    requests: tuple[tuple[str, _Scalar], ...],
    path: str,
    create: bool,
) -> tuple[FieldError, ...]:
    return tuple(_check_resources(dict(limits), dict(requests), path, create))


def _check_resources(
    limits_raw: dict[str, Any], requests_raw: dict[str, Any], path: str, create: bool
) -> list[FieldError]:
    """The checks themselves, on the two maps."""
    errors: list[FieldError] = []
    limits_path, requests_path = f"{path}.limits", f"{path}.requests"
    limits = _parsed(limits_raw, limits_path, errors, create)
    requests = _parsed(requests_raw, requests_path, errors, create)
    qos, hugepages = False, False
    for name in limits_raw:
        entry = f"{limits_path}[{name}]"
        errors += _resource_name_errors(name, entry)
        if name in limits:
            errors += _quantity_value_errors(name, limits[name], entry, create)
        hugepages |= is_hugepages(name)
        qos |= name in _QOS_RESOURCES
    for name in requests_raw:
        entry = f"{requests_path}[{name}]"
        errors += _resource_name_errors(name, entry)
        if name in requests:
            errors += _quantity_value_errors(name, requests[name], entry, create)
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


# --- containers ----------------------------------------------------------------------------------


def _check_ports(ports: Any, path: str) -> list[FieldError]:
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


def _host_port_conflicts(containers: list[Any], path: str) -> list[FieldError]:
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


def _check_env(env: Any, path: str) -> list[FieldError]:
    """ValidateEnv: names (the relaxed rule of every supported version)."""
    errors: list[FieldError] = []
    for index, var in enumerate(_list(env)):
        if not isinstance(var, dict):
            continue
        name = _text(var.get("name"))
        if name == "":
            errors.append(required_error("POD-006", f"{path}[{index}].name"))
        elif name is not None:
            for problem in relaxed_env_var_name_problems(name):
                errors.append(invalid("POD-006", f"{path}[{index}].name", name, problem))
    return errors


def _check_volume_mounts(mounts: Any, volumes: set[str], path: str) -> list[FieldError]:
    """ValidateVolumeMounts: names a valid volume, a unique mountPath."""
    errors: list[FieldError] = []
    mount_points: set[str] = set()
    for index, mount in enumerate(_list(mounts)):
        if not isinstance(mount, dict):
            continue
        at = f"{path}[{index}]"
        name, mount_path = _text(mount.get("name")), _text(mount.get("mountPath"))
        if name is not None:
            if name == "":
                errors.append(required_error("POD-008", f"{at}.name"))
            if name not in volumes:
                errors.append(FieldError("POD-008", f"{at}.name", ErrorType.NOT_FOUND, value=name))
        if mount_path is not None:
            if mount_path == "":
                errors.append(required_error("POD-008", f"{at}.mountPath"))
            if mount_path in mount_points:
                errors.append(invalid("POD-008", f"{at}.mountPath", mount_path, "must be unique"))
            mount_points.add(mount_path)
    return errors


def _check_container(
    container: dict[str, Any], volumes: set[str], path: str, create: bool
) -> list[FieldError]:
    """validateContainerCommon, the covered parts, in upstream's order."""
    errors: list[FieldError] = []
    name = _text(container.get("name"))
    if name == "":
        errors.append(required_error("POD-002", f"{path}.name"))
    elif name is not None:
        for problem in dns1123_label_problems(name):
            errors.append(invalid("POD-002", f"{path}.name", name, problem))
    if _text(container.get("image")) == "":
        errors.append(required_error("POD-003", f"{path}.image"))
    errors += _check_ports(container.get("ports"), f"{path}.ports")
    errors += _check_env(container.get("env"), f"{path}.env")
    errors += _check_volume_mounts(container.get("volumeMounts"), volumes, f"{path}.volumeMounts")
    policy = _text(container.get("imagePullPolicy"))
    if policy and policy not in PULL_POLICIES:
        errors.append(not_supported("POD-004", f"{path}.imagePullPolicy", policy, PULL_POLICIES))
    errors += check_resources(container.get("resources"), f"{path}.resources", create)
    return errors


def _check_containers(
    containers: list[Any], volumes: set[str], path: str, create: bool
) -> list[FieldError]:
    """validateContainers: at least one, names unique, host ports unique across them."""
    if not containers:
        return [required_error("POD-001", path)]
    errors: list[FieldError] = []
    names: set[Any] = set()
    for index, container in enumerate(containers):
        if not isinstance(container, dict):
            continue
        errors += _check_container(container, volumes, f"{path}[{index}]", create)
        name = _text(container.get("name"))
        if name is not None and name in names:
            errors.append(
                FieldError("POD-002", f"{path}[{index}].name", ErrorType.DUPLICATE, value=name)
            )
        names.add(name)
    return errors + _host_port_conflicts(containers, path)


def _check_init_containers(
    init: list[Any], regular: list[Any], volumes: set[str], path: str, create: bool
) -> list[FieldError]:
    """validateInitContainers: names unique across init and regular containers."""
    errors: list[FieldError] = []
    names = {_text(_dict(container).get("name")) for container in regular}
    for index, container in enumerate(init):
        if not isinstance(container, dict):
            continue
        errors += _check_container(container, volumes, f"{path}[{index}]", create)
        name = _text(container.get("name"))
        if name is not None and name in names:
            errors.append(
                FieldError("POD-002", f"{path}[{index}].name", ErrorType.DUPLICATE, value=name)
            )
        elif name:
            names.add(name)
        # Upstream checks each init container's host ports alone (and names it index 0).
        errors += _host_port_conflicts([container], path)
    return errors


def _check_volumes(volumes: list[Any], path: str) -> tuple[set[str], list[FieldError]]:
    """ValidateVolumes: names valid and unique; the valid ones can be mounted."""
    errors: list[FieldError] = []
    valid: set[str] = set()
    for index, volume in enumerate(volumes):
        if not isinstance(volume, dict):
            continue
        at = f"{path}[{index}].name"
        name = _text(volume.get("name"))
        if name is None:
            continue
        problems: list[FieldError] = []
        if name == "":
            problems.append(required_error("POD-007", at))
        else:
            problems += [invalid("POD-007", at, name, p) for p in dns1123_label_problems(name)]
        if name in valid:
            problems.append(FieldError("POD-007", at, ErrorType.DUPLICATE, value=name))
        if problems:
            errors += problems
        else:
            valid.add(name)
    return valid, errors


def check_pod_template(template: Any, path: str, *, create: bool) -> list[FieldError]:
    """The covered part of ValidatePodTemplateSpec for the template at `path`.

    `create`: the request creates the object (upstream relaxes some checks on UPDATE for
    values the stored template already had).
    """
    template = _dict(template)
    errors = check_labels_and_annotations(_dict(template.get("metadata")), path)
    spec = _dict(template.get("spec"))
    spec_path = f"{path}.spec"
    volumes, volume_errors = _check_volumes(_list(spec.get("volumes")), f"{spec_path}.volumes")
    errors += volume_errors
    containers = _list(spec.get("containers"))
    errors += _check_containers(containers, volumes, f"{spec_path}.containers", create)
    init = _list(spec.get("initContainers"))
    errors += _check_init_containers(
        init, containers, volumes, f"{spec_path}.initContainers", create
    )
    return errors
