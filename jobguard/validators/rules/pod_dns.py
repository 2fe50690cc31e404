"""POD-023: DNS and host names (upstream validateDNSPolicy, validatePodDNSConfig,
ValidateHostAliases, the hostname and subdomain checks of ValidatePodSpec, validatePodHostName),
each `(value, path, options) -> list[FieldError]`.

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
from jobguard.validators.names import regex_error
from jobguard.validators.rules.pod_common import (
    PodOptions,
    as_dict,
    as_list,
    each,
    ip_problems,
    label_problems,
    subdomain_problems,
    text,
)

DNS_POLICIES = ["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"]
HOSTNAME_FIELDS = ("hostname", "subdomain")
_UNDERSCORE_LABEL = "_?[a-z0-9]([-_a-z0-9]*[a-z0-9])?"
_UNDERSCORE_SUBDOMAIN_FMT = _UNDERSCORE_LABEL + r"(\." + _UNDERSCORE_LABEL + ")*"
_UNDERSCORE_SUBDOMAIN = re.compile(_UNDERSCORE_SUBDOMAIN_FMT)
_UNDERSCORE_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '_', '-' "
    "or '.', and must start and end with an alphanumeric character"
)


def validate_dns_policy(value: Any, path: str, options: PodOptions) -> list[FieldError]:
    """validateDNSPolicy (defaulted to ClusterFirst)."""
    policy = text(value) or "ClusterFirst"  # SetDefaults_PodSpec: unset or "" is ClusterFirst
    if policy in DNS_POLICIES:
        return []
    return [not_supported("POD-023", path, policy, DNS_POLICIES)]


def is_dns1123_subdomain_with_underscore(search: str) -> tuple[str, ...]:
    """IsDNS1123SubdomainWithUnderscore (RelaxedDNSSearchValidation)."""
    problems: list[str] = []
    if len(search) > 253:
        problems.append("must be no more than 253 characters")
    if _UNDERSCORE_SUBDOMAIN.fullmatch(search) is None:
        problems.append(regex_error(_UNDERSCORE_MSG, _UNDERSCORE_SUBDOMAIN_FMT, "example.com"))
    return tuple(problems)


def validate_pod_dns_config(
    spec: dict[str, Any], path: str, options: PodOptions
) -> list[FieldError]:
    """validatePodDNSConfig (`path` is spec.dnsConfig)."""
    config = spec.get("dnsConfig")
    policy = spec.get("dnsPolicy")
    if policy == "None":
        if not isinstance(config, dict):
            return [required("POD-023", path, "must provide `dnsConfig` when `dnsPolicy` is None")]
        if not as_list(config.get("nameservers")):
            detail = "must provide at least one DNS nameserver when `dnsPolicy` is None"
            return [required("POD-023", f"{path}.nameservers", detail)]
    if not isinstance(config, dict):
        return []
    errors: list[FieldError] = []
    nameservers = as_list(config.get("nameservers"))
    if len(nameservers) > 3:
        detail = "must not have more than 3 nameservers"
        errors.append(invalid("POD-023", f"{path}.nameservers", nameservers, detail))
    for index, server in enumerate(nameservers):
        if isinstance(server, str):
            at = f"{path}.nameservers[{index}]"
            errors += each("POD-023", at, server, ip_problems(server, options.strict_ip))
    searches = [s for s in as_list(config.get("searches")) if isinstance(s, str)]
    if len(searches) > 32:
        detail = "must not have more than 32 search paths"
        errors.append(invalid("POD-023", f"{path}.searches", searches, detail))
    if len(" ".join(searches)) > 2048:
        detail = "must not have more than 2048 characters (including spaces) in the search list"
        errors.append(invalid("POD-023", f"{path}.searches", searches, detail))
    for index, search in enumerate(as_list(config.get("searches"))):
        if not isinstance(search, str) or search == ".":
            continue
        search = search.removesuffix(".")
        errors += each(
            "POD-023",
            f"{path}.searches[{index}]",
            search,
            is_dns1123_subdomain_with_underscore(search),
        )
    for index, option in enumerate(as_list(config.get("options"))):
        if not text(as_dict(option).get("name")):
            errors.append(required("POD-023", f"{path}.options[{index}]", "must not be empty"))
    return errors


def validate_pod_host_name(
    spec: dict[str, Any], path: str, options: PodOptions
) -> list[FieldError]:
    """ValidatePodSpec: hostnameOverride (1.35 and later), then hostname and subdomain."""
    errors: list[FieldError] = []
    override = spec.get("hostnameOverride")
    if options.hostname_override and isinstance(override, str):
        at = f"{path}.hostnameOverride"
        if spec.get("setHostnameAsFQDN") is True:
            detail = "may not be specified when setHostnameAsFQDN is true"
            errors.append(forbidden("POD-023", at, detail))
        if spec.get("hostNetwork") is True:
            errors.append(forbidden("POD-023", at, "may not be specified when hostNetwork is true"))
        if len(override) > 64:
            errors.append(
                FieldError("POD-023", at, ErrorType.TOO_LONG, "may not be more than 64 bytes")
            )
        errors += each("POD-023", at, override, subdomain_problems(override))
    return errors


def validate_hostname_and_subdomain(
    spec: dict[str, Any], path: str, options: PodOptions
) -> list[FieldError]:
    """ValidatePodSpec: hostname and subdomain are DNS labels."""
    errors: list[FieldError] = []
    for name in HOSTNAME_FIELDS:
        value = text(spec.get(name))
        if value:
            errors += each("POD-023", f"{path}.{name}", value, label_problems(value))
    return errors


def validate_host_aliases(value: Any, path: str, options: PodOptions) -> list[FieldError]:
    """ValidateHostAliases."""
    errors: list[FieldError] = []
    for index, alias in enumerate(as_list(value)):
        alias = as_dict(alias)
        ip = text(alias.get("ip"))
        if ip is not None:
            errors += each("POD-023", f"{path}[{index}].ip", ip, ip_problems(ip, options.strict_ip))
        for host_index, hostname in enumerate(as_list(alias.get("hostnames"))):
            if isinstance(hostname, str):
                at = f"{path}[{index}].hostnames[{host_index}]"
                errors += each("POD-023", at, hostname, subdomain_problems(hostname))
    return errors
