"""POD-018 (security contexts) and POD-019 (the pod's OS): upstream's
validatePodSpecSecurityContext, ValidateSecurityContext, validateHostUsers, validateOS,
validateLinux and validateWindows, each `(value, path, options) -> list[FieldError]`.

Not covered: `privileged` and hostProcess containers "disallowed by cluster policy" (an API
server flag, taken as allowing them).

Upstream: `pkg/apis/core/validation/validation.go`, kubernetes v1.37.2 (git tag v1.37.2).
"""

from __future__ import annotations

import re
from typing import Any

from jobguard.validators.errors import (
    ErrorType,
    FieldError,
    forbidden,
    invalid,
    not_supported,
    required,
)
from jobguard.validators.rules.pod_common import (
    PodOptions,
    as_dict,
    as_list,
    duplicate,
    each,
    local_path_problems,
    subdomain_problems,
    text,
    validate_user_id,
    visit_containers_with_path,
)

_PROFILE_TYPES = ["Localhost", "RuntimeDefault", "Unconfined"]
PROC_MOUNT_TYPES = ["Default", "Unmasked"]
OS_NAMES = ["linux", "windows"]
_SYSCTL = re.compile(r"([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?")
_SYSCTL_MSG = (
    "must have at most 253 characters and match regex "
    r"^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$"
)
_HOST_USERS_FALSE = "when `hostUsers` is false"


def _id(value: Any, path: str) -> list[FieldError]:
    """IsValidUserID / IsValidGroupID."""
    return validate_user_id("POD-018", value, path)


def validate_seccomp_profile_field(profile: Any, path: str) -> list[FieldError]:
    """validateSeccompProfileField."""
    if not isinstance(profile, dict):
        return []
    rule = "POD-018"
    errors: list[FieldError] = []
    kind = text(profile.get("type"))
    if kind == "":
        errors.append(required(rule, f"{path}.type", "type is required when seccompProfile is set"))
    elif kind is not None and kind not in _PROFILE_TYPES:
        errors.append(not_supported(rule, f"{path}.type", kind, _PROFILE_TYPES))
    local = profile.get("localhostProfile")
    if kind == "Localhost":
        if not isinstance(local, str):
            detail = "must be set when seccomp type is Localhost"
            errors.append(required(rule, f"{path}.localhostProfile", detail))
        else:
            errors += each(rule, f"{path}.localhostProfile", local, local_path_problems(local))
    elif local is not None:
        detail = "can only be set when seccomp type is Localhost"
        errors.append(invalid(rule, f"{path}.localhostProfile", profile, detail))
    return errors


def validate_app_armor_profile_field(profile: Any, path: str) -> list[FieldError]:
    """ValidateAppArmorProfileField."""
    if not isinstance(profile, dict):
        return []
    rule = "POD-018"
    errors: list[FieldError] = []
    kind = text(profile.get("type"))
    local = profile.get("localhostProfile")
    at = f"{path}.localhostProfile"
    if kind == "Localhost":
        detail = "must be set when AppArmor type is Localhost"
        if not isinstance(local, str):
            errors.append(required(rule, at, detail))
        else:
            if local.strip() != local:
                errors.append(invalid(rule, at, local, "must not be padded with whitespace"))
            elif local == "":
                errors.append(required(rule, at, detail))
            if len(local.encode()) > 4095:
                errors.append(
                    FieldError(rule, at, ErrorType.TOO_LONG, "may not be more than 4095 bytes")
                )
    elif kind in ("RuntimeDefault", "Unconfined"):
        if local is not None:
            detail = "can only be set when AppArmor type is Localhost"
            errors.append(invalid(rule, at, local, detail))
    elif kind == "":
        detail = "type is required when appArmorProfile is set"
        errors.append(required(rule, f"{path}.type", detail))
    elif kind is not None:
        errors.append(not_supported(rule, f"{path}.type", kind, _PROFILE_TYPES))
    return errors


def _sysctl_namespace(name: str) -> str:
    """utilsysctl.GetNamespace (after NormalizeName): "net", "ipc" or ""."""
    if "/" in name and ("." not in name or name.index("/") < name.index(".")):
        name = name.translate(str.maketrans("/.", "./"))
    if name.startswith("net."):
        return "net"
    if name.startswith(("kernel.shm", "kernel.msg", "fs.mqueue.")) or name == "kernel.sem":
        return "ipc"
    return ""


def validate_host_sysctl(name: str, spec: dict[str, Any]) -> str:
    """ValidateHostSysctl: the problem of a namespaced sysctl in a pod sharing that host
    namespace ("" when none)."""
    namespace = _sysctl_namespace(name)
    if namespace == "net" and spec.get("hostNetwork") is True:
        return "may not be specified when 'hostNetwork' is true"
    if namespace == "ipc" and spec.get("hostIPC") is True:
        return "may not be specified when 'hostIPC' is true"
    return ""


def validate_pod_spec_security_context(
    spec: dict[str, Any], path: str, options: PodOptions
) -> list[FieldError]:
    """validatePodSpecSecurityContext (`path` is the pod spec's)."""
    # Defaulted to {} (and upstream keeps hostPID, hostIPC and hostNetwork in it).
    context = as_dict(spec.get("securityContext"))
    rule = "POD-018"
    at = f"{path}.securityContext"
    errors = _id(context.get("fsGroup"), f"{at}.fsGroup")
    errors += _id(context.get("runAsUser"), f"{at}.runAsUser")
    errors += _id(context.get("runAsGroup"), f"{at}.runAsGroup")
    for index, group in enumerate(as_list(context.get("supplementalGroups"))):
        errors += _id(group, f"{at}.supplementalGroups[{index}]")
    if not options.share_process_namespace_last:
        # Before 1.37 inside validatePodSpecSecurityContext, at its path.
        errors += validate_share_process_namespace(spec, at)
    names: set[str] = set()
    for index, sysctl in enumerate(as_list(context.get("sysctls"))):
        name = text(as_dict(sysctl).get("name"))
        if name is None:
            continue
        name_path = f"{at}.sysctls[{index}].name"
        if name == "":
            errors.append(required(rule, name_path))
        elif len(name) > 253 or _SYSCTL.fullmatch(name) is None:
            errors.append(invalid(rule, name_path, name, _SYSCTL_MSG))
        elif name in names:
            errors.append(duplicate(rule, name_path, name))
        if not options.allow_namespaced_sysctls_for_host_net_and_host_ipc:
            detail = validate_host_sysctl(name, spec)
            if detail:
                errors.append(invalid(rule, name_path, name, detail))
        names.add(name)
    errors += _enum(context, "fsGroupChangePolicy", ["Always", "OnRootMismatch"], at)
    errors += validate_seccomp_profile_field(context.get("seccompProfile"), f"{at}.seccompProfile")
    errors += validate_windows_security_context_options(
        context.get("windowsOptions"), f"{at}.windowsOptions"
    )
    errors += validate_app_armor_profile_field(
        context.get("appArmorProfile"), f"{at}.appArmorProfile"
    )
    errors += _enum(context, "supplementalGroupsPolicy", ["Merge", "Strict"], at)
    # validateSELinuxChangePolicy: only Recursive while SELinuxMount is off (before 1.37) and
    # the stored template has no policy.
    if options.allow_only_recursive_se_linux_change_policy:
        errors += _enum(context, "seLinuxChangePolicy", ["Recursive"], at)
    else:
        errors += _enum(context, "seLinuxChangePolicy", ["MountOption", "Recursive"], at)
    return errors


def validate_share_process_namespace(spec: dict[str, Any], path: str) -> list[FieldError]:
    """validateShareProcessNamespace (`path`: the pod spec's from 1.37, the security
    context's before)."""
    if spec.get("shareProcessNamespace") is True and spec.get("hostPID") is True:
        detail = "ShareProcessNamespace and HostPID cannot both be enabled"
        return [invalid("POD-018", f"{path}.shareProcessNamespace", True, detail)]
    return []


def _enum(context: dict[str, Any], name: str, supported: list[str], path: str) -> list[FieldError]:
    value = context.get(name)
    if isinstance(value, str) and value not in supported:
        return [not_supported("POD-018", f"{path}.{name}", value, supported)]
    return []


def validate_security_context(
    context: Any, path: str, host_users: bool, allow_sys_admin_when_privilege_escalation_false: bool
) -> list[FieldError]:
    """ValidateSecurityContext (privileged is allowed: the API server's default)."""
    if not isinstance(context, dict):
        return []
    rule = "POD-018"
    errors = _id(context.get("runAsUser"), f"{path}.runAsUser")
    errors += _id(context.get("runAsGroup"), f"{path}.runAsGroup")
    proc_mount = context.get("procMount")
    if isinstance(proc_mount, str):
        if proc_mount not in PROC_MOUNT_TYPES:
            errors.append(not_supported(rule, f"{path}.procMount", proc_mount, PROC_MOUNT_TYPES))
        if host_users and proc_mount == "Unmasked":
            detail = "`hostUsers` must be false to use `Unmasked`"
            errors.append(invalid(rule, f"{path}.procMount", proc_mount, detail))
    errors += validate_seccomp_profile_field(
        context.get("seccompProfile"), f"{path}.seccompProfile"
    )
    if context.get("allowPrivilegeEscalation") is False:
        if context.get("privileged") is True:
            detail = "cannot set `allowPrivilegeEscalation` to false and `privileged` to true"
            errors.append(invalid(rule, path, context, detail))
        added = as_list(as_dict(context.get("capabilities")).get("add"))
        for capability in () if allow_sys_admin_when_privilege_escalation_false else added:
            if capability == "CAP_SYS_ADMIN":
                detail = (
                    "cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` "
                    "CAP_SYS_ADMIN"
                )
                errors.append(invalid(rule, path, context, detail))
    errors += validate_windows_security_context_options(
        context.get("windowsOptions"), f"{path}.windowsOptions"
    )
    errors += validate_app_armor_profile_field(
        context.get("appArmorProfile"), f"{path}.appArmorProfile"
    )
    return errors


def validate_host_users(spec: dict[str, Any], path: str, options: PodOptions) -> list[FieldError]:
    """validateHostUsers: a pod in a user namespace shares no host namespace, has no devices."""
    if spec.get("hostUsers") is not False:
        return []
    rule = "POD-018"
    errors: list[FieldError] = []
    # Upstream names the internal fields: hostNetwork, then HostPID and HostIPC capitalised.
    for field_name, shown in (
        ("hostNetwork", "hostNetwork"),
        ("hostPID", "HostPID"),
        ("hostIPC", "HostIPC"),
    ):
        if field_name == "hostNetwork" and options.allow_user_namespaces_host_network_support:
            continue
        if spec.get(field_name) is True:
            errors.append(forbidden(rule, f"{path}.{shown}", _HOST_USERS_FALSE))
    if options.allow_user_namespaces_with_volume_devices:
        return errors
    for kind in ("initContainers", "containers"):
        for index, container in enumerate(as_list(spec.get(kind))):
            if as_list(as_dict(container).get("volumeDevices")):
                at = f"{path}.{kind}[{index}].volumeDevices"
                errors.append(forbidden(rule, at, _HOST_USERS_FALSE))
    return errors


_WINDOWS_POD_FIELDS = (
    "appArmorProfile",
    "seLinuxOptions",
    "seccompProfile",
    "fsGroup",
    "fsGroupChangePolicy",
    "sysctls",
    "runAsUser",
    "runAsGroup",
    "supplementalGroups",
    "supplementalGroupsPolicy",
    "seLinuxChangePolicy",
)
_WINDOWS_HOST_FIELDS = ("hostUsers", "hostPID", "hostIPC", "shareProcessNamespace")
# validateWindows's order: from 1.37 the host namespace fields follow the security context's
# (the internal fields moved out of it); before, they sat among them.
_WINDOWS_POD_ORDER = _WINDOWS_POD_FIELDS + _WINDOWS_HOST_FIELDS
_WINDOWS_POD_ORDER_1_36 = (
    "appArmorProfile",
    "seLinuxOptions",
    "hostUsers",
    "hostPID",
    "hostIPC",
    "seccompProfile",
    "fsGroup",
    "fsGroupChangePolicy",
    "sysctls",
    "shareProcessNamespace",
    "runAsUser",
    "runAsGroup",
    "supplementalGroups",
    "supplementalGroupsPolicy",
    "seLinuxChangePolicy",
)
_WINDOWS_CONTAINER_FIELDS = (
    "appArmorProfile",
    "seLinuxOptions",
    "seccompProfile",
    "capabilities",
    "readOnlyRootFilesystem",
    "privileged",
    "allowPrivilegeEscalation",
    "procMount",
    "runAsUser",
    "runAsGroup",
)


def validate_os(spec: dict[str, Any], path: str, options: PodOptions) -> list[FieldError]:
    """validateOS, then validateLinux or validateWindows (POD-019)."""
    os_field = spec.get("os")
    if not isinstance(os_field, dict):
        return []
    rule = "POD-019"
    name = text(os_field.get("name"))
    if name is None:
        return []
    if name == "":
        return [required(rule, f"{path}.os.name")]
    if name not in OS_NAMES:
        return [not_supported(rule, f"{path}.os", name, OS_NAMES)]
    errors: list[FieldError] = []
    context = as_dict(spec.get("securityContext"))
    if name == "linux":
        detail = "windows options cannot be set for a linux pod"
        if context.get("windowsOptions") is not None:
            errors.append(forbidden(rule, f"{path}.securityContext.windowsOptions", detail))
        for container, at in visit_containers_with_path(spec, path):
            if as_dict(container.get("securityContext")).get("windowsOptions") is not None:
                errors.append(forbidden(rule, f"{at}.securityContext.windowsOptions", detail))
        return errors
    detail = "cannot be set for a windows pod"
    order = _WINDOWS_POD_ORDER if options.share_process_namespace_last else _WINDOWS_POD_ORDER_1_36
    for field_name in order:
        if field_name in _WINDOWS_HOST_FIELDS:
            value = spec.get(field_name)
            if value is True or (
                field_name in ("hostUsers", "shareProcessNamespace") and value is not None
            ):
                errors.append(forbidden(rule, f"{path}.{field_name}", detail))
            continue
        value = context.get(field_name)
        if value is not None and value != []:
            errors.append(forbidden(rule, f"{path}.securityContext.{field_name}", detail))
    for container, at in visit_containers_with_path(spec, path):
        container_context = as_dict(container.get("securityContext"))
        for field_name in _WINDOWS_CONTAINER_FIELDS:
            if container_context.get(field_name) is not None:
                errors.append(forbidden(rule, f"{at}.securityContext.{field_name}", detail))
    return errors


# validateWindowsSecurityContextOptions's grammar (pkg/apis/core/validation/validation.go).
_MAX_GMSA_KIB = 64
_MAX_DOMAIN = 256
_MAX_USER = 104
_CTRL = re.compile(r"[\x00-\x1f\x7f]")
_NETBIOS = re.compile(r'[^\\/:*?"<>|.][^\\/:*?"<>|]{0,14}')
_DNS_LABEL = r"[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?"
_DNS_DOMAIN = re.compile(rf"{_DNS_LABEL}(?:\.{_DNS_LABEL})*")
_USER_CHARS = re.compile(r'["/\\:;|=,+*?<>@\[\]]')
_USER_DOTS_SPACES = re.compile(r"[. ]+")


def validate_windows_security_context_options(options: Any, path: str) -> list[FieldError]:
    """validateWindowsSecurityContextOptions (`path` is the windowsOptions')."""
    if not isinstance(options, dict):
        return []
    rule = "POD-018"
    errors: list[FieldError] = []
    name = options.get("gmsaCredentialSpecName")
    if isinstance(name, str):
        for problem in subdomain_problems(name):
            errors.append(invalid(rule, f"{path}.gmsaCredentialSpecName", name, problem))
    spec = options.get("gmsaCredentialSpec")
    if isinstance(spec, str):
        at = f"{path}.gmsaCredentialSpec"
        if spec == "":
            errors.append(invalid(rule, at, spec, "gmsaCredentialSpec cannot be an empty string"))
        elif len(spec.encode()) > _MAX_GMSA_KIB * 1024:
            detail = f"gmsaCredentialSpec size must be under {_MAX_GMSA_KIB} KiB"
            errors.append(invalid(rule, at, spec, detail))
    user_name = options.get("runAsUserName")
    if isinstance(user_name, str):
        errors += [
            invalid(rule, f"{path}.runAsUserName", user_name, problem)
            for problem in _run_as_user_name_problems(user_name)
        ]
    return errors


def _run_as_user_name_problems(value: str) -> list[str]:
    if value == "":
        return ["runAsUserName cannot be an empty string"]
    if _CTRL.search(value):
        return ["runAsUserName cannot contain control characters"]
    parts = value.split("\\")
    if len(parts) > 2:
        return ["runAsUserName cannot contain more than one backslash"]
    domain, user = ("", parts[0]) if len(parts) == 1 else (parts[0], parts[1])
    problems: list[str] = []
    if len(domain.encode()) >= _MAX_DOMAIN:
        problems.append(f"runAsUserName's Domain length must be under {_MAX_DOMAIN} characters")
    if len(parts) == 2 and not (_NETBIOS.fullmatch(domain) or _DNS_DOMAIN.fullmatch(domain)):
        problems.append("runAsUserName's Domain doesn't match the NetBios nor the DNS format")
    if user == "":
        problems.append("runAsUserName's User cannot be empty")
    elif len(user.encode()) > _MAX_USER:
        problems.append(
            f"runAsUserName's User length must not be longer than {_MAX_USER} characters"
        )
    if _USER_DOTS_SPACES.fullmatch(user):
        problems.append("runAsUserName's User cannot contain only periods or spaces")
    if _USER_CHARS.search(user):
        problems.append(
            """runAsUserName's User cannot contain the following characters: "/\\:;|=,+*?<>@[]"""
        )
    return problems


def validate_windows_host_process_pod(spec: dict[str, Any], path: str) -> list[FieldError]:
    """validateWindowsHostProcessPod (without "disallowed by cluster policy": privileged
    containers are taken as allowed, the API server's --allow-privileged of most clusters)."""
    rule = "POD-018"
    pod_options = as_dict(spec.get("securityContext")).get("windowsOptions")
    pod_host_process = as_dict(pod_options).get("hostProcess")
    pod_host_process = pod_host_process if isinstance(pod_host_process, bool) else None
    errors: list[FieldError] = []
    containers = host_process = 0
    for container, at in visit_containers_with_path(spec, path):
        containers += 1
        windows = as_dict(as_dict(container.get("securityContext")).get("windowsOptions"))
        own = windows.get("hostProcess")
        own = own if isinstance(own, bool) else None
        if pod_host_process is not None and own is not None and own != pod_host_process:
            detail = (
                "pod hostProcess value must be identical if both are specified, was "
                f"{str(pod_host_process).lower()}"
            )
            errors.append(
                invalid(rule, f"{at}.securityContext.windowsOptions.hostProcess", own, detail)
            )
        if own is True or (own is None and pod_host_process is True):
            host_process += 1
    if host_process:
        if host_process != containers:
            detail = (
                "If pod contains any hostProcess containers then all containers must be "
                "HostProcess containers"
            )
            errors.append(invalid(rule, path, "", detail))
        if spec.get("hostNetwork") is not True:
            detail = "hostNetwork must be true if pod contains any hostProcess containers"
            errors.append(invalid(rule, f"{path}.hostNetwork", False, detail))
    return errors
