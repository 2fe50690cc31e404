"""POD-011..POD-017: upstream's container checks beyond the essentials of pod.py
(pkg/apis/core/validation: validateContainerCommon, validateContainers, validateInitContainers
and what they call), each `(value, path, options) -> list[FieldError]`.

Values are judged as the API server judges them after v1 defaulting: an unset httpGet path or
scheme, probe threshold or terminationMessagePolicy is its default (defaults.py).

Upstream: `pkg/apis/core/validation/validation.go`, kubernetes v1.37.2 (git tag v1.37.2).
"""

from __future__ import annotations

import re
from typing import Any

from jobguard.validators.errors import (
    FieldError,
    forbidden,
    invalid,
    not_supported,
    required,
    too_many,
)
from jobguard.validators.names import (
    label_wording,
    name_is_dns_subdomain,
    port_name_problems,
    port_num_problems,
    relaxed_env_var_name_problems,
)
from jobguard.validators.quantity import QuantityError, quantity_of
from jobguard.validators.rules.pod_common import (
    NON_NEGATIVE,
    PodOptions,
    as_dict,
    as_list,
    duplicate,
    each,
    integer,
    label_problems,
    local_path_problems,
    not_found,
    opt_int,
    text,
)

PROBE_HANDLERS = ("exec", "httpGet", "tcpSocket", "grpc")
LIFECYCLE_HANDLERS = ("exec", "httpGet", "tcpSocket", "sleep")
HTTP_SCHEMES = ["HTTP", "HTTPS"]
TERMINATION_MESSAGE_POLICIES = ["FallbackToLogsOnError", "File"]
# The sets.List (sorted) orders of upstream's supportedContainerRestartPolicies,
# supportedContainerRestartPolicyOperators, supportedResizeResources and
# supportedResizePolicies.
CONTAINER_RESTART_POLICIES = ["Always", "Never", "OnFailure"]
CONTAINER_RESTART_RULE_OPERATORS = ["In", "NotIn"]
RESIZE_RESOURCES = ["cpu", "memory"]
RESIZE_RESTART_POLICIES = ["NotRequired", "RestartContainer"]
_HTTP_HEADER = re.compile("[-A-Za-z0-9]+")
_HTTP_HEADER_MSG = (
    "a valid HTTP header must consist of alphanumeric characters or '-' (e.g. 'X-Header-Name', "
    "regex used for validation is '[-A-Za-z0-9]+')"
)
NOT_FOR_INIT = "may not be set for init containers without restartPolicy=Always"


# --- probes and lifecycle handlers (POD-011) -----------------------------------------------------


def validate_port_num_or_name(port: Any, path: str) -> list[FieldError]:
    """ValidatePortNumOrName."""
    if isinstance(port, str):
        return list(each("POD-011", path, port, port_name_problems(port)))
    number = integer(port)
    if number is None:
        return []
    return list(each("POD-011", path, number, port_num_problems(number)))


def validate_handler(
    handler: dict[str, Any], kinds: tuple[str, ...], grace: int | None, path: str
) -> list[FieldError]:
    """validateHandler: exactly one handler type, each valid."""
    rule = "POD-011"
    errors: list[FieldError] = []
    count = 0
    for kind in kinds:
        action = handler.get(kind)
        if not isinstance(action, dict):
            continue
        at = f"{path}.{kind}"
        if count:
            errors.append(forbidden(rule, at, "may not specify more than 1 handler type"))
            continue
        count += 1
        if kind == "exec":
            if not as_list(action.get("command")):
                errors.append(required(rule, f"{at}.command"))
        elif kind == "httpGet":
            # SetDefaults_HTTPGetAction: an unset, null or empty path is "/" (so upstream's
            # Required cannot fire), an empty scheme HTTP.
            errors += validate_port_num_or_name(action.get("port"), f"{at}.port")
            scheme = text(action.get("scheme") or "HTTP")
            if scheme is not None and scheme not in HTTP_SCHEMES:
                errors.append(not_supported(rule, f"{at}.scheme", scheme, HTTP_SCHEMES))
            for header in as_list(action.get("httpHeaders")):
                name = text(as_dict(header).get("name"))
                if name is not None and _HTTP_HEADER.fullmatch(name) is None:
                    errors.append(invalid(rule, f"{at}.httpHeaders", name, _HTTP_HEADER_MSG))
        elif kind == "tcpSocket":
            errors += validate_port_num_or_name(action.get("port"), f"{at}.port")
        elif kind == "grpc":
            port = integer(action.get("port"))
            if port is not None:
                errors += each(rule, f"{at}.port", port, port_num_problems(port))
        else:  # sleep
            seconds = integer(action.get("seconds"))
            if grace is not None and seconds is not None and not 0 <= seconds <= grace:
                detail = (
                    f"must be non-negative and less than terminationGracePeriodSeconds ({grace})"
                )
                errors.append(invalid(rule, at, action, detail))
    if count == 0:
        errors.append(required(rule, path, "must specify a handler type"))
    return errors


_PROBE_FIELDS = (
    ("initialDelaySeconds", 0),
    ("timeoutSeconds", 1),
    ("periodSeconds", 10),
    ("successThreshold", 1),
    ("failureThreshold", 3),
)


def validate_probe(probe: Any, grace: int | None, path: str, kind: str) -> list[FieldError]:
    """validateProbe, with validateLivenessProbe / validateReadinessProbe /
    validateStartupProbe's own checks as `kind` (the probe's field name) says."""
    if not isinstance(probe, dict):
        return []
    rule = "POD-011"
    errors = validate_handler(probe, PROBE_HANDLERS, grace, path)
    for name, default in _PROBE_FIELDS:
        value = opt_int(probe.get(name))
        if value is None or (value == 0 and name != "initialDelaySeconds"):
            value = default  # SetDefaults_Probe: an unset or zero value is defaulted
        if value < 0:
            errors.append(invalid(rule, f"{path}.{name}", value, NON_NEGATIVE))
    probe_grace = opt_int(probe.get("terminationGracePeriodSeconds"))
    if probe_grace is not None and probe_grace <= 0:
        at = f"{path}.terminationGracePeriodSeconds"
        errors.append(invalid(rule, at, probe_grace, "must be greater than 0"))
    if kind in ("livenessProbe", "startupProbe"):
        success = opt_int(probe.get("successThreshold")) or 1
        if success != 1:
            errors.append(invalid(rule, f"{path}.successThreshold", success, "must be 1"))
    elif probe_grace is not None:
        detail = "must not be set for readinessProbes"
        errors.append(invalid(rule, f"{path}.terminationGracePeriodSeconds", probe_grace, detail))
    return errors


def validate_lifecycle(lifecycle: Any, grace: int | None, path: str) -> list[FieldError]:
    """validateLifecycle (stopSignal is alpha: dropped before validation)."""
    errors: list[FieldError] = []
    for hook in ("postStart", "preStop"):
        handler = as_dict(lifecycle).get(hook)
        if isinstance(handler, dict):
            errors += validate_handler(handler, LIFECYCLE_HANDLERS, grace, f"{path}.{hook}")
    return errors


LIFECYCLE_AND_PROBES_ORDER = ("lifecycle", "livenessProbe", "readinessProbe", "startupProbe")
LIFECYCLE_AND_PROBES = frozenset(LIFECYCLE_AND_PROBES_ORDER)


def validate_lifecycle_and_probes(
    container: dict[str, Any], grace: int | None, path: str
) -> list[FieldError]:
    """validateContainers' (and a sidecar's) validateLifecycle, validateLivenessProbe,
    validateReadinessProbe, validateStartupProbe, in that order."""
    errors: list[FieldError] = []
    if LIFECYCLE_AND_PROBES.isdisjoint(container):
        return errors
    if isinstance(container.get("lifecycle"), dict):
        errors += validate_lifecycle(container["lifecycle"], grace, f"{path}.lifecycle")
    for kind in ("livenessProbe", "readinessProbe", "startupProbe"):
        errors += validate_probe(container.get(kind), grace, f"{path}.{kind}", kind)
    return errors


# --- restart policies and rules (POD-012) ------------------------------------------------------


def _restart_rules(rules: list[Any], path: str, options: PodOptions) -> list[FieldError]:
    """validateContainerRestartPolicy's rules part."""
    rule = "POD-012"
    errors: list[FieldError] = []
    at = f"{path}.restartPolicyRules"
    if len(rules) > 20:
        if options.newest_resize_policy:
            errors.append(too_many(rule, at, len(rules), 20))
        else:
            errors.append(invalid(rule, at, rules, "must have at most 20 items"))
    actions = ["Restart", "RestartAllContainers"] if options.restart_all_containers else ["Restart"]
    for index, entry in enumerate(rules):
        entry = as_dict(entry)
        action = text(entry.get("action"))
        if action is not None and action not in actions:
            errors.append(not_supported(rule, f"{at}[{index}].action", action, actions))
        codes = entry.get("exitCodes")
        if not isinstance(codes, dict):
            errors.append(required(rule, f"{at}[{index}].exitCodes", "must be specified"))
            continue
        operator = text(codes.get("operator"))
        if operator is not None and operator not in CONTAINER_RESTART_RULE_OPERATORS:
            at_operator = f"{at}[{index}].exitCodes.operator"
            supported = CONTAINER_RESTART_RULE_OPERATORS
            errors.append(not_supported(rule, at_operator, operator, supported))
        values = as_list(codes.get("values"))
        if len(values) > 255:
            errors.append(too_many(rule, f"{at}[{index}].exitCodes.values", len(values), 255))
    return errors


def validate_container_restart_policy(
    container: dict[str, Any], path: str, options: PodOptions
) -> list[FieldError]:
    """validateContainerRestartPolicy (ContainerRestartRules on)."""
    rule = "POD-012"
    policy = text(container.get("restartPolicy"))
    rules = as_list(container.get("restartPolicyRules"))
    errors: list[FieldError] = []
    if policy is not None and policy not in CONTAINER_RESTART_POLICIES:
        supported = CONTAINER_RESTART_POLICIES
        errors.append(not_supported(rule, f"{path}.restartPolicy", policy, supported))
    if rules and container.get("restartPolicy") is None:
        detail = "must specify restartPolicy when restart rules are used"
        errors.append(required(rule, f"{path}.restartPolicy", detail))
    if rules:
        errors += _restart_rules(rules, path, options)
    return errors


def validate_init_container_restart_policy(
    container: dict[str, Any], path: str, options: PodOptions
) -> list[FieldError]:
    """validateInitContainerRestartPolicy (restartPolicyRules are dropped before validation
    unless AllowContainerRestartPolicyRules)."""
    raw = container.get("restartPolicy")
    if raw is None:
        if options.container_restart_rules and as_list(container.get("restartPolicyRules")):
            detail = "must specify restartPolicy when restart rules are used"
            return [required("POD-012", f"{path}.restartPolicy", detail)]
        return []
    policy = text(raw)
    if policy is None:
        return []  # a type error: the schema rules report it
    if options.container_restart_rules:
        if policy != "Always" or options.restart_all_containers:
            return validate_container_restart_policy(container, path, options)
        if as_list(container.get("restartPolicyRules")):
            detail = (
                "restartPolicyRules are not allowed for init containers with restart policy Always"
            )
            return [forbidden("POD-012", f"{path}.restartPolicyRules", detail)]
        return []
    if policy != "Always":
        return [not_supported("POD-012", f"{path}.restartPolicy", policy, ["Always"])]
    return []


# --- resize policy (POD-013) ---------------------------------------------------------------------


def validate_resize_policy(
    policies: Any, path: str, pod_restart_policy: str, options: PodOptions
) -> list[FieldError]:
    """validateResizePolicy."""
    rule = "POD-013"
    errors: list[FieldError] = []
    seen: set[Any] = set()
    for index, entry in enumerate(as_list(policies)):
        entry = as_dict(entry)
        resource = text(entry.get("resourceName"))
        if resource in seen:
            errors.append(duplicate(rule, f"{path}[{index}]", resource))
        seen.add(resource)
        if resource == "":
            errors.append(required(rule, path))
        elif resource is not None and resource not in RESIZE_RESOURCES:
            errors.append(not_supported(rule, path, resource, RESIZE_RESOURCES))
        policy = text(entry.get("restartPolicy"))
        if policy == "":
            errors.append(required(rule, path))
        elif policy is not None and policy not in RESIZE_RESTART_POLICIES:
            errors.append(not_supported(rule, path, policy, RESIZE_RESTART_POLICIES))
        if pod_restart_policy == "Never" and policy != "NotRequired":
            pod = "pod " if options.newest_resize_policy else ""
            detail = f"must be 'NotRequired' when {pod}`restartPolicy` is 'Never'"
            errors.append(invalid(rule, path, policy, detail))
    return errors


# --- env sources (POD-014) ---------------------------------------------------------------------

ENV_FIELD_PATHS = [
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
    "spec.nodeName",
    "spec.serviceAccountName",
    "status.hostIP",
    "status.hostIPs",
    "status.podIP",
    "status.podIPs",
]
VOLUME_FIELD_PATHS = [
    "metadata.annotations",
    "metadata.labels",
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
]
_CONVERTIBLE = frozenset(
    (
        "metadata.annotations",
        "metadata.labels",
        "metadata.name",
        "metadata.namespace",
        "metadata.uid",
        "spec.nodeName",
        "spec.restartPolicy",
        "spec.serviceAccountName",
        "spec.schedulerName",
        "status.phase",
        "status.hostIP",
        "status.hostIPs",
        "status.podIP",
        "status.podIPs",
        "spec.host",
    )
)
RESOURCE_FIELD_PATHS = [
    "limits.cpu",
    "limits.ephemeral-storage",
    "limits.memory",
    "requests.cpu",
    "requests.ephemeral-storage",
    "requests.memory",
]
_HUGEPAGES_PREFIXES = ("limits.hugepages-", "requests.hugepages-")
_CPU_DIVISORS = frozenset(("1m", "1"))
_MEMORY_DIVISORS = frozenset(
    ("1", "1k", "1M", "1G", "1T", "1P", "1E", "1Ki", "1Mi", "1Gi", "1Ti", "1Pi", "1Ei")
)
_MEMORY_DIVISORS_MSG = "1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei"
_CONFIG_KEY = re.compile("[-._a-zA-Z0-9]+")


def split_maybe_subscripted_path(field_path: str) -> tuple[str, str] | None:
    """fieldpath.SplitMaybeSubscriptedPath."""
    if not field_path.endswith("']"):
        return None
    parts = field_path[:-2].split("['", 1)
    if len(parts) < 2 or not parts[0]:
        return None
    return parts[0], parts[1]


def validate_object_field_selector(
    rule: str, selector: dict[str, Any], allowed: list[str], path: str, version: str
) -> list[FieldError]:
    """validateObjectFieldSelector (with ConvertDownwardAPIFieldLabel); a subscript's key in the
    words of release `version`."""
    # SetDefaults_ObjectFieldSelector: an unset, null or empty apiVersion is v1 (so upstream's
    # Required cannot fire).
    api_version = text(selector.get("apiVersion") or "v1")
    field_path = text(selector.get("fieldPath"))
    if api_version is None or field_path is None:
        return []
    if not field_path:
        return [required(rule, f"{path}.fieldPath")]
    split = split_maybe_subscripted_path(field_path)
    problem = ""
    if api_version != "v1":
        problem = f"unsupported pod version: {api_version}"
    elif split is not None and split[0] not in ("metadata.annotations", "metadata.labels"):
        problem = f"field label does not support subscript: {field_path}"
    elif split is None and field_path not in _CONVERTIBLE:
        problem = f"field label not supported: {field_path}"
    if problem:
        detail = f"error converting fieldPath: {problem}"
        return [invalid(rule, f"{path}.fieldPath", field_path, detail)]
    if split is None:
        converted = "spec.nodeName" if field_path == "spec.host" else field_path
        if converted not in allowed:
            return [not_supported(rule, f"{path}.fieldPath", converted, allowed)]
        return []
    base, key = split
    if base == "metadata.annotations":
        key = key.lower()
    return list(each(rule, path, key, label_wording(version).key(key)))


def validate_container_resource_field_selector(
    rule: str, selector: dict[str, Any], path: str, volume: bool
) -> list[FieldError]:
    """validateContainerResourceFieldSelector and validateContainerResourceDivisor."""
    errors: list[FieldError] = []
    resource = text(selector.get("resource")) or ""
    if volume and not text(selector.get("containerName")):
        errors.append(required(rule, f"{path}.containerName"))
    elif not resource:
        errors.append(required(rule, f"{path}.resource"))
    elif resource not in RESOURCE_FIELD_PATHS and not resource.startswith(_HUGEPAGES_PREFIXES):
        errors.append(not_supported(rule, f"{path}.resource", resource, RESOURCE_FIELD_PATHS))
    raw = selector.get("divisor")
    if raw is None or isinstance(raw, bool) or not isinstance(raw, str | int | float):
        return errors
    try:
        divisor = quantity_of(raw)
    except QuantityError as exc:
        # The API server cannot decode the object (a 400 naming the quantity's format).
        errors.append(invalid(rule, f"{path}.divisor", raw, str(exc)))
        return errors
    if divisor.value == 0:
        return errors
    shown = str(divisor)
    at = f"{path}.divisor"
    memory = "only divisor's values " + _MEMORY_DIVISORS_MSG + " are supported with the "
    if resource in ("limits.cpu", "requests.cpu") and shown not in _CPU_DIVISORS:
        detail = "only divisor's values 1m and 1 are supported with the cpu resource"
        errors.append(invalid(rule, at, resource, detail))
    elif resource in ("limits.memory", "requests.memory") and shown not in _MEMORY_DIVISORS:
        errors.append(invalid(rule, at, resource, memory + "memory resource"))
    elif (
        resource in ("limits.ephemeral-storage", "requests.ephemeral-storage")
        and shown not in _MEMORY_DIVISORS
    ):
        errors.append(invalid(rule, at, resource, memory + "local ephemeral storage resource"))
    if resource.startswith(_HUGEPAGES_PREFIXES) and shown not in _MEMORY_DIVISORS:
        errors.append(invalid(rule, at, resource, memory + "hugepages resource"))
    return errors


def config_key_problems(key: str) -> tuple[str, ...]:
    """IsConfigMapKey."""
    problems: list[str] = []
    if len(key) > 253:
        problems.append("must be no more than 253 characters")
    if _CONFIG_KEY.fullmatch(key) is None:
        problems.append(
            "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. "
            "'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is "
            "'[-._a-zA-Z0-9]+')"
        )
    if key == ".":
        problems.append("must not be '.'")
    elif key == "..":
        problems.append("must not be '..'")
    elif key.startswith(".."):
        problems.append("must not start with '..'")
    return tuple(problems)


def validate_key_selector(selector: dict[str, Any], path: str) -> list[FieldError]:
    """validateConfigMapKeySelector / validateSecretKeySelector."""
    rule = "POD-014"
    errors: list[FieldError] = []
    name = text(selector.get("name"))
    if name is not None:
        errors += each(rule, f"{path}.name", name, name_is_dns_subdomain(name, False))
    key = text(selector.get("key"))
    if key == "":
        errors.append(required(rule, f"{path}.key"))
    elif key is not None:
        errors += each(rule, f"{path}.key", key, config_key_problems(key))
    return errors


def validate_file_key_selector(selector: dict[str, Any], path: str) -> list[FieldError]:
    """validateFileKeySelector."""
    rule = "POD-014"
    errors: list[FieldError] = []
    key = text(selector.get("key"))
    if key == "":
        errors.append(required(rule, f"{path}.key"))
    elif key is not None:
        errors += each(rule, f"{path}.key", key, relaxed_env_var_name_problems(key))
    volume = text(selector.get("volumeName"))
    if volume == "":
        errors.append(required(rule, f"{path}.volumeName"))
    elif volume is not None:
        errors += each(rule, f"{path}.volumeName", volume, label_problems(volume))
    file_path = text(selector.get("path"))
    if file_path == "":
        errors.append(required(rule, f"{path}.path"))
    elif file_path is not None and ".." in file_path.split("/"):
        errors.append(invalid(rule, f"{path}.path", file_path, "must not contain '..'"))
    return errors


def validate_env_var_value_from(
    var: dict[str, Any], path: str, options: PodOptions
) -> list[FieldError]:
    """validateEnvVarValueFrom."""
    source = var.get("valueFrom")
    if not isinstance(source, dict):
        return []
    rule = "POD-014"
    errors: list[FieldError] = []
    count = 0
    if isinstance(source.get("fieldRef"), dict):
        count += 1
        errors += validate_object_field_selector(
            rule, source["fieldRef"], ENV_FIELD_PATHS, f"{path}.fieldRef", options.version
        )
    if isinstance(source.get("resourceFieldRef"), dict):
        count += 1
        errors += validate_container_resource_field_selector(
            rule, source["resourceFieldRef"], f"{path}.resourceFieldRef", False
        )
    for kind in ("configMapKeyRef", "secretKeyRef"):
        if isinstance(source.get(kind), dict):
            count += 1
            errors += validate_key_selector(source[kind], f"{path}.{kind}")
    if options.env_files and isinstance(source.get("fileKeyRef"), dict):
        count += 1
        errors += validate_file_key_selector(source["fileKeyRef"], f"{path}.fileKeyRef")
    if count == 0:
        if options.env_files:
            detail = (
                "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef`, "
                "`secretKeyRef` or `fileKeyRef`"
            )
        else:
            detail = (
                "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or "
                "`secretKeyRef`"
            )
        errors.append(invalid(rule, path, "", detail))
    elif text(var.get("value")):
        errors.append(invalid(rule, path, "", "may not be specified when `value` is not empty"))
    elif count > 1:
        detail = "may not have more than one field specified at a time"
        errors.append(invalid(rule, path, "", detail))
    return errors


def validate_env(
    env: Any, path: str, options: PodOptions, file_refs: list[str] | None = None
) -> list[FieldError]:
    """ValidateEnv: names (POD-006, the relaxed rule of every supported version), sources.
    `file_refs` collects the paths of the fileKeyRef sources seen (for the volume checks)."""
    errors: list[FieldError] = []
    for index, var in enumerate(as_list(env)):
        if not isinstance(var, dict):
            continue
        at = f"{path}[{index}]"
        name = text(var.get("name"))
        if name == "":
            errors.append(required("POD-006", f"{at}.name"))
        elif name is not None:
            errors += each("POD-006", f"{at}.name", name, relaxed_env_var_name_problems(name))
        if "valueFrom" in var:
            errors += validate_env_var_value_from(var, f"{at}.valueFrom", options)
            if file_refs is not None and "fileKeyRef" in as_dict(var["valueFrom"]):
                file_refs.append(at)
    return errors


def validate_env_from(env_from: Any, path: str, options: PodOptions) -> list[FieldError]:
    """ValidateEnvFrom."""
    rule = "POD-014"
    errors: list[FieldError] = []
    for index, source in enumerate(as_list(env_from)):
        if not isinstance(source, dict):
            continue
        at = f"{path}[{index}]"
        prefix = text(source.get("prefix"))
        if prefix:
            errors += each(rule, f"{at}.prefix", prefix, relaxed_env_var_name_problems(prefix))
        count = 0
        for kind in ("configMapRef", "secretRef"):
            ref = source.get(kind)
            if not isinstance(ref, dict):
                continue
            count += 1
            name = text(ref.get("name"))
            if name == "":
                errors.append(required(rule, f"{at}.{kind}.name"))
            elif name is not None:
                errors += each(rule, f"{at}.{kind}.name", name, name_is_dns_subdomain(name, True))
        if count == 0:
            detail = "must specify one of: `configMapRef` or `secretRef`"
            errors.append(invalid(rule, path, "", detail))
        elif count > 1:
            detail = "may not have more than one field specified at a time"
            errors.append(invalid(rule, path, "", detail))
    return errors


def validate_file_key_ref_volumes(
    containers: list[Any], path: str, volume_kinds: dict[str, str], options: PodOptions
) -> list[FieldError]:
    """validateFileKeyRefVolumes: the volume a fileKeyRef names exists and is an emptyDir."""
    if not options.env_files:
        return []
    errors: list[FieldError] = []
    for index, container in enumerate(containers):
        for env_index, var in enumerate(as_list(as_dict(container).get("env"))):
            ref = as_dict(as_dict(as_dict(var).get("valueFrom")).get("fileKeyRef"))
            volume = text(ref.get("volumeName"))
            if not ref or not volume:
                continue
            at = f"{path}[{index}].env[{env_index}].valueFrom.fileKeyRef.volumeName"
            kind = volume_kinds.get(volume)
            if kind is None:
                errors.append(not_found("POD-014", at, volume))
            elif kind != "emptyDir":
                detail = "referenced volume must be of type emptyDir"
                errors.append(invalid("POD-014", at, volume, detail))
    return errors


# --- volume mounts and devices (POD-008, POD-016) ------------------------------------------------

_PROPAGATIONS = ["Bidirectional", "HostToContainer", "None"]
_RRO_MODES = ["Disabled", "Enabled", "IfPossible"]
BLOCK_KINDS = frozenset(("persistentVolumeClaim", "ephemeral"))
_PLAIN_MOUNT = frozenset(("name", "mountPath", "readOnly"))
_NONE: frozenset[Any] = frozenset()


def validate_volume_mounts(
    container: dict[str, Any], volume_kinds: dict[str, str], path: str
) -> list[FieldError]:
    """ValidateVolumeMounts (POD-008: names and mount paths; POD-016 the rest)."""
    rule = "POD-016"
    errors: list[FieldError] = []
    mount_points: set[str] = set()
    devices = [as_dict(d) for d in as_list(container.get("volumeDevices"))]
    device_names = {d.get("name") for d in devices} if devices else _NONE
    device_paths = {d.get("devicePath") for d in devices} if devices else _NONE
    for index, mount in enumerate(as_list(container.get("volumeMounts"))):
        if not isinstance(mount, dict):
            continue
        at = f"{path}[{index}]"
        name, mount_path = text(mount.get("name")), text(mount.get("mountPath"))
        if name is not None:
            if name == "":
                errors.append(required("POD-008", f"{at}.name"))
            if name not in volume_kinds:
                errors.append(not_found("POD-008", f"{at}.name", name))
        if mount_path is not None:
            if mount_path == "":
                errors.append(required("POD-008", f"{at}.mountPath"))
            if mount_path in mount_points:
                errors.append(invalid("POD-008", f"{at}.mountPath", mount_path, "must be unique"))
            mount_points.add(mount_path)
        if devices and name in device_names:
            detail = "must not already exist in volumeDevices"
            errors.append(invalid(rule, f"{at}.name", name, detail))
        if devices and mount_path in device_paths:
            detail = "must not already exist as a path in volumeDevices"
            errors.append(invalid(rule, f"{at}.mountPath", mount_path, detail))
        if mount.keys() <= _PLAIN_MOUNT:
            continue  # nothing more to judge
        sub_path = text(mount.get("subPath"))
        if sub_path:
            errors += each(rule, f"{path}.subPath", sub_path, local_path_problems(sub_path))
        expression = text(mount.get("subPathExpr"))
        if expression:
            if sub_path:
                detail = "subPathExpr and subPath are mutually exclusive"
                errors.append(invalid(rule, f"{at}.subPathExpr", expression, detail))
            errors += each(rule, f"{path}.subPathExpr", expression, local_path_problems(expression))
        propagation = mount.get("mountPropagation")
        if isinstance(propagation, str):
            at_propagation = f"{path}.mountPropagation"
            if propagation not in _PROPAGATIONS:
                errors.append(not_supported(rule, at_propagation, propagation, _PROPAGATIONS))
            privileged = as_dict(container.get("securityContext")).get("privileged") is True
            if propagation == "Bidirectional" and not privileged:
                detail = (
                    "Bidirectional mount propagation is available only to privileged containers"
                )
                errors.append(forbidden(rule, at_propagation, detail))
        errors += validate_mount_recursive_read_only(mount, f"{path}.recursiveReadOnly")
    return errors


def validate_mount_recursive_read_only(mount: dict[str, Any], path: str) -> list[FieldError]:
    """validateMountRecursiveReadOnly."""
    mode = mount.get("recursiveReadOnly")
    if not isinstance(mode, str) or mode == "Disabled":
        return []
    if mode not in _RRO_MODES:
        return [not_supported("POD-016", path, mode, _RRO_MODES)]
    errors: list[FieldError] = []
    if mount.get("readOnly") is not True:
        errors.append(forbidden("POD-016", path, "may only be specified when readOnly is true"))
    propagation = mount.get("mountPropagation")
    if isinstance(propagation, str) and propagation != "None":
        detail = "may only be specified when mountPropagation is None or not specified"
        errors.append(forbidden("POD-016", path, detail))
    return errors


def validate_volume_devices(
    container: dict[str, Any], volume_kinds: dict[str, str], path: str
) -> list[FieldError]:
    """ValidateVolumeDevices."""
    rule = "POD-016"
    errors: list[FieldError] = []
    mounts = [as_dict(m) for m in as_list(container.get("volumeMounts"))]
    mount_names = {m.get("name") for m in mounts}
    mount_paths = {m.get("mountPath") for m in mounts}
    names: set[str] = set()
    paths: set[str] = set()
    for index, device in enumerate(as_list(container.get("volumeDevices"))):
        if not isinstance(device, dict):
            continue
        at = f"{path}[{index}]"
        name, device_path = text(device.get("name")), text(device.get("devicePath"))
        if name is None or device_path is None:
            continue
        kind = volume_kinds.get(name)
        if name == "":
            errors.append(required(rule, f"{at}.name"))
        if name in names:
            errors.append(invalid(rule, f"{at}.name", name, "must be unique"))
        if kind is not None and kind not in BLOCK_KINDS:
            detail = (
                "can only use volume source type of PersistentVolumeClaim or Ephemeral for "
                "block mode"
            )
            errors.append(invalid(rule, f"{at}.name", name, detail))
        if kind is None:
            errors.append(not_found(rule, f"{at}.name", name))
        if device_path == "":
            errors.append(required(rule, f"{at}.devicePath"))
        if device_path in paths:
            errors.append(invalid(rule, f"{at}.devicePath", device_path, "must be unique"))
        if device_path and ".." in device_path.split("/"):
            detail = "can not contain backsteps ('..')"
            errors.append(invalid(rule, f"{at}.devicePath", device_path, detail))
        else:
            paths.add(device_path)
        if name in mount_names:
            detail = "must not already exist in volumeMounts"
            errors.append(invalid(rule, f"{at}.name", name, detail))
        if device_path in mount_paths:
            detail = "must not already exist as a path in volumeMounts"
            errors.append(invalid(rule, f"{at}.devicePath", device_path, detail))
        if name:
            names.add(name)
    return errors


# --- container misc (POD-017) --------------------------------------------------------------------


def validate_termination_message_policy(policy: Any, path: str) -> list[FieldError]:
    """validateContainerCommon: terminationMessagePolicy. SetDefaults_Container makes an unset,
    null or empty one File, so upstream's Required cannot fire."""
    value = text(policy or "File")
    if value is None or value in TERMINATION_MESSAGE_POLICIES:
        return []
    return [not_supported("POD-017", path, value, TERMINATION_MESSAGE_POLICIES)]


def validate_pod_host_network_deps(
    spec: dict[str, Any], path: str, options: PodOptions
) -> list[FieldError]:
    """validatePodHostNetworkDeps (`path` is the pod spec's): with hostNetwork, a hostPort is
    0 or the containerPort (a template is not a pod: ResourceIsPod is false)."""
    if spec.get("hostNetwork") is not True:
        return []
    errors: list[FieldError] = []
    path = f"{path}.containers"
    for index, container in enumerate(as_list(spec.get("containers"))):
        for port_index, port in enumerate(as_list(as_dict(container).get("ports"))):
            port = as_dict(port)
            host_port = integer(port.get("hostPort"))
            if host_port and host_port != integer(port.get("containerPort")):
                at = f"{path}[{index}].ports[{port_index}].hostPort"
                detail = "must match `containerPort` when `hostNetwork` is true"
                errors.append(invalid("POD-017", at, host_port, detail))
    return errors


def validate_no_ephemeral_containers_in_template(value: Any, path: str) -> list[FieldError]:
    """ValidatePodTemplateSpec's last check: no ephemeral containers in a template."""
    if not as_list(value):
        return []
    return [forbidden("POD-017", path, "ephemeral containers not allowed in pod template")]
