"""POD-025: resource claims (upstream validatePodResourceClaims, validatePodResourceClaim and
validateResourceClaimNames), each `(value, path, options) -> list[FieldError]`.

DynamicResourceAllocation is off in 1.33 (the fields are dropped before validation) and on from
1.34. Resources themselves (the containers', the pod-level `resources` and `overhead`) are
POD-009 and POD-010 (pod.py).

Upstream: `pkg/apis/core/validation/validation.go`, kubernetes v1.37.2 (git tag v1.37.2).
"""

from __future__ import annotations

from typing import Any

from jobguard.validators.errors import ErrorType, FieldError, invalid, required
from jobguard.validators.rules.pod_common import (
    PodOptions,
    as_dict,
    as_list,
    duplicate,
    each,
    label_problems,
    subdomain_problems,
    text,
)


def gather_pod_resource_claim_names(spec: dict[str, Any], options: PodOptions) -> frozenset[str]:
    """The names of the pod's resource claims that containers may use."""
    if not options.dra:
        return frozenset()
    names = (text(as_dict(claim).get("name")) for claim in as_list(spec.get("resourceClaims")))
    return frozenset(name for name in names if name)


def validate_pod_resource_claims(value: Any, path: str, options: PodOptions) -> list[FieldError]:
    """validatePodResourceClaims (spec.resourceClaims)."""
    if not options.dra:
        return []
    rule = "POD-025"
    errors: list[FieldError] = []
    seen: set[str] = set()
    for index, claim in enumerate(as_list(value)):
        if not isinstance(claim, dict):
            continue
        at = f"{path}[{index}]"
        name = text(claim.get("name"))
        if name == "":
            errors.append(required(rule, f"{at}.name"))
        elif name is not None and name in seen:
            errors.append(duplicate(rule, f"{at}.name", name))
        elif name is not None:
            problems = label_problems(name)
            errors += each(rule, f"{at}.name", name, problems)
            seen.add(name)
        claim_name = claim.get("resourceClaimName")
        template_name = claim.get("resourceClaimTemplateName")
        if claim_name is not None and template_name is not None:
            detail = (
                "at most one of `resourceClaimName` or `resourceClaimTemplateName` may be specified"
            )
            errors.append(invalid(rule, at, claim, detail))
        if claim_name is None and template_name is None:
            detail = "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`"
            errors.append(invalid(rule, at, claim, detail))
        for field_name, field_value in (
            ("resourceClaimName", claim_name),
            ("resourceClaimTemplateName", template_name),
        ):
            if isinstance(field_value, str):
                problems = subdomain_problems(field_value)
                errors += each(rule, f"{at}.{field_name}", field_value, problems)
    return errors


def validate_resource_claim_names(
    claims: Any, path: str, pod_claims: frozenset[str], options: PodOptions
) -> list[FieldError]:
    """validateResourceClaimNames (a container's resources.claims)."""
    if not options.dra:
        return []
    rule = "POD-025"
    errors: list[FieldError] = []
    keys: set[str] = set()
    for index, claim in enumerate(as_list(claims)):
        claim = as_dict(claim)
        at = f"{path}[{index}]"
        name = text(claim.get("name"))
        request = text(claim.get("request")) or ""
        if name is None:
            continue
        if name == "":
            errors.append(required(rule, at))
        else:
            key = f"{name}/{request}" if request else name
            if key in keys:
                errors.append(duplicate(rule, at, key))
            keys.add(key)
            if name not in pod_claims:
                if pod_claims:
                    listed = ", ".join(sorted(pod_claims))
                    detail = f"must be one of the names in pod.spec.resourceClaims: {listed}"
                else:
                    detail = "must be one of the names in pod.spec.resourceClaims which is empty"
                errors.append(FieldError(rule, at, ErrorType.NOT_FOUND, detail, name))
        if request:
            errors += each(rule, f"{at}.request", request, label_problems(request))
    return errors
