"""POD-020 (node selector and affinity), POD-021 (tolerations), POD-022 (topology spread) and
POD-024 (the pod's scalar fields): upstream's validateAffinity, ValidateTolerations,
validateTopologySpreadConstraints and the scalar checks of ValidatePodSpec, each
`(value, path, options) -> list[FieldError]`."""

from __future__ import annotations

from typing import Any

from jobguard.validators.errors import (
    ErrorType,
    FieldError,
    forbidden,
    invalid,
    not_supported,
    required,
)
from jobguard.validators.names import (
    inclusive_range_error,
    label_value_problems,
    qualified_name_problems,
)
from jobguard.validators.rules.pod_common import (
    POSITIVE,
    PodOptions,
    as_dict,
    as_list,
    check_label_selector,
    check_labels,
    duplicate,
    each,
    label_problems,
    opt_int,
    subdomain_problems,
    text,
)

_WEIGHT = "must be in the range 1-100"

# --- node selector and affinity (POD-020) --------------------------------------------------------


def check_node_selector(value: Any, path: str, options: PodOptions) -> list[FieldError]:
    """ValidatePodSpec: ValidateLabels(nodeSelector)."""
    return check_labels("POD-020", value, path)


def _node_requirement(
    requirement: dict[str, Any], check_values: bool, path: str
) -> list[FieldError]:
    """ValidateNodeSelectorRequirement."""
    rule = "POD-020"
    errors: list[FieldError] = []
    operator = text(requirement.get("operator"))
    values = as_list(requirement.get("values"))
    if operator in ("In", "NotIn"):
        if not values:
            detail = "must be specified when `operator` is 'In' or 'NotIn'"
            errors.append(required(rule, f"{path}.values", detail))
    elif operator in ("Exists", "DoesNotExist"):
        if values:
            detail = "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
            errors.append(forbidden(rule, f"{path}.values", detail))
    elif operator in ("Gt", "Lt"):
        if len(values) != 1:
            detail = "must be specified single value when `operator` is 'Lt' or 'Gt'"
            errors.append(required(rule, f"{path}.values", detail))
    else:
        errors.append(invalid(rule, f"{path}.operator", operator, "not a valid selector operator"))
    key = text(requirement.get("key"))
    if key is not None:
        errors += each(rule, f"{path}.key", key, qualified_name_problems(key))
    if check_values:
        for index, value in enumerate(values):
            if isinstance(value, str):
                errors += each(rule, f"{path}.values[{index}]", value, label_value_problems(value))
    return errors


def _node_field_requirement(requirement: dict[str, Any], path: str) -> list[FieldError]:
    """ValidateNodeFieldSelectorRequirement (only metadata.name can be selected)."""
    rule = "POD-020"
    errors: list[FieldError] = []
    operator = text(requirement.get("operator"))
    values = as_list(requirement.get("values"))
    if operator in ("In", "NotIn"):
        if len(values) != 1:
            detail = (
                "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"
            )
            errors.append(required(rule, f"{path}.values", detail))
    else:
        errors.append(invalid(rule, f"{path}.operator", operator, "not a valid selector operator"))
    key = text(requirement.get("key"))
    if key != "metadata.name":
        errors.append(invalid(rule, f"{path}.key", key, "not a valid field selector key"))
    else:
        for index, value in enumerate(values):
            if isinstance(value, str):
                errors += each(rule, f"{path}.values[{index}]", value, subdomain_problems(value))
    return errors


def _node_selector_term(term: Any, check_values: bool, path: str) -> list[FieldError]:
    """ValidateNodeSelectorTerm."""
    term = as_dict(term)
    errors: list[FieldError] = []
    for index, requirement in enumerate(as_list(term.get("matchExpressions"))):
        at = f"{path}.matchExpressions[{index}]"
        errors += _node_requirement(as_dict(requirement), check_values, at)
    for index, requirement in enumerate(as_list(term.get("matchFields"))):
        errors += _node_field_requirement(as_dict(requirement), f"{path}.matchFields[{index}]")
    return errors


def _weight(term: dict[str, Any], path: str) -> list[FieldError]:
    weight = opt_int(term.get("weight")) or 0
    if not 1 <= weight <= 100:
        return [invalid("POD-020", f"{path}.weight", weight, _WEIGHT)]
    return []


def _node_affinity(affinity: dict[str, Any], path: str) -> list[FieldError]:
    """validateNodeAffinity (ValidateNodeSelector, ValidatePreferredSchedulingTerms)."""
    errors: list[FieldError] = []
    required_terms = affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    if isinstance(required_terms, dict):
        at = f"{path}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
        terms = as_list(required_terms.get("nodeSelectorTerms"))
        if not terms:
            errors.append(required("POD-020", at, "must have at least one node selector term"))
        for index, term in enumerate(terms):
            errors += _node_selector_term(term, True, f"{at}[{index}]")
    at = f"{path}.preferredDuringSchedulingIgnoredDuringExecution"
    for index, term in enumerate(
        as_list(affinity.get("preferredDuringSchedulingIgnoredDuringExecution"))
    ):
        term = as_dict(term)
        errors += _weight(term, f"{at}[{index}]")
        errors += _node_selector_term(term.get("preference"), False, f"{at}[{index}].preference")
    return errors


def _pod_affinity_term(term: dict[str, Any], path: str) -> list[FieldError]:
    """validatePodAffinityTerm."""
    rule = "POD-020"
    errors = check_label_selector(rule, term.get("labelSelector"), f"{path}.labelSelector")
    errors += check_label_selector(rule, term.get("namespaceSelector"), f"{path}.namespaceSelector")
    for namespace in as_list(term.get("namespaces")):
        if isinstance(namespace, str):
            errors += each(rule, f"{path}.namespace", namespace, label_problems(namespace))
    errors += _match_label_keys(term, path, ("matchLabelKeys", "mismatchLabelKeys"))
    topology_key = text(term.get("topologyKey"))
    if topology_key is None:
        return errors
    if topology_key == "":
        errors.append(required(rule, f"{path}.topologyKey", "can not be empty"))
    return errors + list(
        each(rule, f"{path}.topologyKey", topology_key, qualified_name_problems(topology_key))
    )


def _match_label_keys(term: dict[str, Any], path: str, kinds: tuple[str, ...]) -> list[FieldError]:
    """ValidateMatchLabelKeysAndMismatchLabelKeys: keys need a labelSelector and are
    qualified names (the checks against the selector's own keys are not covered)."""
    rule = "POD-020"
    errors: list[FieldError] = []
    has_selector = isinstance(term.get("labelSelector"), dict)
    for kind in kinds:
        keys = as_list(term.get(kind))
        if not keys:
            continue
        if not has_selector:
            detail = "must not be specified when labelSelector is not set"
            errors.append(forbidden(rule, f"{path}.{kind}", detail))
            continue
        for index, key in enumerate(keys):
            if isinstance(key, str):
                errors += each(rule, f"{path}.{kind}[{index}]", key, qualified_name_problems(key))
    return errors


def _pod_affinity(affinity: dict[str, Any], path: str) -> list[FieldError]:
    """validatePodAffinity / validatePodAntiAffinity."""
    errors: list[FieldError] = []
    at = f"{path}.requiredDuringSchedulingIgnoredDuringExecution"
    for index, term in enumerate(
        as_list(affinity.get("requiredDuringSchedulingIgnoredDuringExecution"))
    ):
        errors += _pod_affinity_term(as_dict(term), f"{at}[{index}]")
    at = f"{path}.preferredDuringSchedulingIgnoredDuringExecution"
    for index, term in enumerate(
        as_list(affinity.get("preferredDuringSchedulingIgnoredDuringExecution"))
    ):
        term = as_dict(term)
        errors += _weight(term, f"{at}[{index}]")
        errors += _pod_affinity_term(
            as_dict(term.get("podAffinityTerm")), f"{at}[{index}].podAffinityTerm"
        )
    return errors


def check_affinity(value: Any, path: str, options: PodOptions) -> list[FieldError]:
    """validateAffinity."""
    affinity = as_dict(value)
    errors: list[FieldError] = []
    if isinstance(affinity.get("nodeAffinity"), dict):
        errors += _node_affinity(affinity["nodeAffinity"], f"{path}.nodeAffinity")
    for kind in ("podAffinity", "podAntiAffinity"):
        if isinstance(affinity.get(kind), dict):
            errors += _pod_affinity(affinity[kind], f"{path}.{kind}")
    return errors


# --- tolerations (POD-021) -----------------------------------------------------------------------

TAINT_EFFECTS = ["NoSchedule", "PreferNoSchedule", "NoExecute"]


def check_tolerations(value: Any, path: str, options: PodOptions) -> list[FieldError]:
    """ValidateTolerations (Lt and Gt are alpha, off in every supported version)."""
    rule = "POD-021"
    errors: list[FieldError] = []
    for index, toleration in enumerate(as_list(value)):
        if not isinstance(toleration, dict):
            continue
        at = f"{path}[{index}]"
        key = text(toleration.get("key")) or ""
        operator = text(toleration.get("operator"))
        effect = text(toleration.get("effect")) or ""
        toleration_value = text(toleration.get("value")) or ""
        if operator is None:
            continue
        if key:
            errors += each(rule, f"{at}.key", key, qualified_name_problems(key))
        if not key and operator != "Exists":
            detail = (
                'operator must be Exists when `key` is empty, which means "match all values and '
                'all keys"'
            )
            errors.append(invalid(rule, f"{at}.operator", operator, detail))
        if toleration.get("tolerationSeconds") is not None and effect != "NoExecute":
            detail = "effect must be 'NoExecute' when `tolerationSeconds` is set"
            errors.append(invalid(rule, f"{at}.effect", effect, detail))
        if operator in ("Equal", ""):
            problems = label_value_problems(toleration_value)
            if problems:
                errors.append(invalid(rule, f"{at}.operator", toleration_value, ";".join(problems)))
        elif operator == "Exists":
            if toleration_value:
                detail = "value must be empty when `operator` is 'Exists'"
                errors.append(invalid(rule, f"{at}.operator", toleration_value, detail))
        elif operator in ("Lt", "Gt") and options.version not in ("1.33", "1.34"):
            supported = ["Equal", "Exists", "Lt", "Gt"]
            errors.append(not_supported(rule, f"{at}.operator", operator, supported))
        else:
            errors.append(not_supported(rule, f"{at}.operator", operator, ["Equal", "Exists"]))
        if effect and effect not in TAINT_EFFECTS:
            errors.append(not_supported(rule, f"{at}.effect", effect, TAINT_EFFECTS))
    return errors


# --- topology spread (POD-022) -------------------------------------------------------------------


def check_topology_spread(value: Any, path: str, options: PodOptions) -> list[FieldError]:
    """validateTopologySpreadConstraints."""
    rule = "POD-022"
    errors: list[FieldError] = []
    constraints = [as_dict(c) for c in as_list(value)]
    for index, constraint in enumerate(constraints):
        at = f"{path}[{index}]"
        max_skew = opt_int(constraint.get("maxSkew")) or 0
        if max_skew <= 0:
            errors.append(invalid(rule, f"{at}.maxSkew", max_skew, POSITIVE))
        key = text(constraint.get("topologyKey"))
        if key == "":
            errors.append(required(rule, f"{at}.topologyKey", "can not be empty"))
        action = text(constraint.get("whenUnsatisfiable"))
        actions = ["DoNotSchedule", "ScheduleAnyway"]
        if action is not None and action not in actions:
            errors.append(not_supported(rule, f"{at}.whenUnsatisfiable", action, actions))
        for later in constraints[index + 1 :]:
            if later.get("topologyKey") == constraint.get("topologyKey") and later.get(
                "whenUnsatisfiable"
            ) == constraint.get("whenUnsatisfiable"):
                shown = f"{{{key}, {action}}}"
                errors.append(duplicate(rule, f"{at}.{{topologyKey, whenUnsatisfiable}}", shown))
                break
        min_domains = opt_int(constraint.get("minDomains"))
        if constraint.get("minDomains") is not None and min_domains is not None:
            if min_domains <= 0:
                errors.append(invalid(rule, f"{at}.minDomains", min_domains, POSITIVE))
            if action != "DoNotSchedule":
                detail = f"can only use minDomains if whenUnsatisfiable=DoNotSchedule, not {action}"
                errors.append(invalid(rule, f"{at}.minDomains", min_domains, detail))
        for policy_name in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
            policy = constraint.get(policy_name)
            if isinstance(policy, str) and policy not in ("Honor", "Ignore"):
                errors.append(
                    not_supported(rule, f"{at}.{policy_name}", policy, ["Honor", "Ignore"])
                )
        errors += _spread_match_label_keys(constraint, at, options)
        errors += check_label_selector(rule, constraint.get("labelSelector"), f"{at}.labelSelector")
    return errors


def _spread_match_label_keys(
    constraint: dict[str, Any], path: str, options: PodOptions
) -> list[FieldError]:
    """ValidateMatchLabelKeysInTopologySpread (1.33) / ValidateMatchLabelKeysAndMismatch-
    LabelKeys (1.34 and later)."""
    rule = "POD-022"
    keys = as_list(constraint.get("matchLabelKeys"))
    if not keys:
        return []
    selector = constraint.get("labelSelector")
    if not isinstance(selector, dict):
        detail = "must not be specified when labelSelector is not set"
        return [forbidden(rule, f"{path}.matchLabelKeys", detail)]
    selector_keys: set[Any] = set(as_dict(selector.get("matchLabels")))
    selector_keys |= {as_dict(e).get("key") for e in as_list(selector.get("matchExpressions"))}
    errors: list[FieldError] = []
    for index, key in enumerate(keys):
        if not isinstance(key, str):
            continue
        at = f"{path}.matchLabelKeys[{index}]"
        errors += each(rule, at, key, qualified_name_problems(key))
        if key in selector_keys:
            # 1.34 and later name the constraint itself, indexed (upstream's fldPath.Index(i)).
            conflict_at = at if not options.topology_selector_merge else f"{path}[{index}]"
            detail = "exists in both matchLabelKeys and labelSelector"
            errors.append(invalid(rule, conflict_at, key, detail))
    return errors


# --- scalar fields (POD-024) ---------------------------------------------------------------------

RESTART_POLICIES = ["Always", "OnFailure", "Never"]


def check_restart_policy(value: Any, path: str, options: PodOptions) -> list[FieldError]:
    """validateRestartPolicy (after defaulting: Always when unset)."""
    policy = text(value) or "Always"  # SetDefaults_PodSpec: unset or "" is Always
    if policy in RESTART_POLICIES:
        return []
    return [not_supported("POD-024", path, policy, RESTART_POLICIES)]


def _subdomain_field(spec: dict[str, Any], name: str, path: str) -> list[FieldError]:
    value = text(spec.get(name))
    if not value:
        return []
    return list(each("POD-024", f"{path}.{name}", value, subdomain_problems(value)))


def check_readiness_gates(value: Any, path: str, options: PodOptions) -> list[FieldError]:
    """validateReadinessGates."""
    errors: list[FieldError] = []
    for index, gate in enumerate(as_list(value)):
        condition = text(as_dict(gate).get("conditionType"))
        if condition is not None:
            at = f"{path}[{index}].conditionType"
            errors += each("POD-024", at, condition, qualified_name_problems(condition))
    return errors


def check_scheduling_gates(value: Any, path: str, options: PodOptions) -> list[FieldError]:
    """validateSchedulingGates."""
    errors: list[FieldError] = []
    seen: set[str] = set()
    for index, gate in enumerate(as_list(value)):
        name = text(as_dict(gate).get("name"))
        if name is None:
            continue
        errors += each("POD-024", f"{path}[{index}]", name, qualified_name_problems(name))
        if name in seen:
            errors.append(duplicate("POD-024", f"{path}[{index}]", name))
        seen.add(name)
    return errors


def check_identity_fields(spec: dict[str, Any], path: str, options: PodOptions) -> list[FieldError]:
    """ValidatePodSpec: serviceAccountName, nodeName, activeDeadlineSeconds."""
    errors = _subdomain_field(spec, "serviceAccountName", path)
    errors += _subdomain_field(spec, "nodeName", path)
    deadline = opt_int(spec.get("activeDeadlineSeconds"))
    if deadline is not None and not 1 <= deadline <= 2147483647:
        detail = inclusive_range_error(1, 2147483647)
        errors.append(invalid("POD-024", f"{path}.activeDeadlineSeconds", deadline, detail))
    return errors


def check_priority_fields(spec: dict[str, Any], path: str, options: PodOptions) -> list[FieldError]:
    """ValidatePodSpec: priorityClassName, runtimeClassName, preemptionPolicy."""
    errors = _subdomain_field(spec, "priorityClassName", path)
    runtime = spec.get("runtimeClassName")
    if isinstance(runtime, str):
        at = f"{path}.runtimeClassName"
        errors += each("POD-024", at, runtime, subdomain_problems(runtime))
    policy = spec.get("preemptionPolicy")
    if isinstance(policy, str):
        at = f"{path}.preemptionPolicy"
        if policy == "":
            errors.append(required("POD-024", at))
        elif policy not in ("PreemptLowerPriority", "Never"):
            supported = ["PreemptLowerPriority", "Never"]
            errors.append(not_supported("POD-024", at, policy, supported))
    return errors


def too_long(rule: str, path: str, limit: int) -> FieldError:
    return FieldError(rule, path, ErrorType.TOO_LONG, f"may not be more than {limit} bytes")
