"""POD-020 (node selector and affinity), POD-021 (tolerations), POD-022 (topology spread) and
POD-024 (the pod's scalar fields): upstream's validateAffinity, ValidateTolerations,
validateTopologySpreadConstraints and the scalar checks of ValidatePodSpec, each
`(value, path, options) -> list[FieldError]`.

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
)
from jobguard.validators.names import (
    inclusive_range_error,
    label_wording,
)
from jobguard.validators.rules.pod_common import (
    POSITIVE,
    PodOptions,
    as_dict,
    as_list,
    duplicate,
    each,
    label_problems,
    opt_int,
    string_list,
    subdomain_problems,
    text,
    validate_labels,
)
from jobguard.validators.selectors import LabelSelectorOptions, validate_label_selector

_WEIGHT = "must be in the range 1-100"

# --- node selector and affinity (POD-020) --------------------------------------------------------


def validate_node_selector_labels(value: Any, path: str, options: PodOptions) -> list[FieldError]:
    """ValidatePodSpec: ValidateLabels(nodeSelector)."""
    return validate_labels("POD-020", value, path, options.version)


def validate_node_selector_requirement(
    requirement: dict[str, Any], check_values: bool, path: str, version: str
) -> list[FieldError]:
    """ValidateNodeSelectorRequirement (keys and values in the words of release `version`)."""
    rule = "POD-020"
    words = label_wording(version)
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
        errors += each(rule, f"{path}.key", key, words.key(key))
    if check_values:
        for index, value in enumerate(values):
            if isinstance(value, str):
                errors += each(rule, f"{path}.values[{index}]", value, words.value(value))
    return errors


def validate_node_field_selector_requirement(
    requirement: dict[str, Any], path: str
) -> list[FieldError]:
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


def validate_node_selector_term(
    term: Any, check_values: bool, path: str, version: str
) -> list[FieldError]:
    """ValidateNodeSelectorTerm."""
    term = as_dict(term)
    errors: list[FieldError] = []
    for index, requirement in enumerate(as_list(term.get("matchExpressions"))):
        at = f"{path}.matchExpressions[{index}]"
        errors += validate_node_selector_requirement(
            as_dict(requirement), check_values, at, version
        )
    for index, requirement in enumerate(as_list(term.get("matchFields"))):
        errors += validate_node_field_selector_requirement(
            as_dict(requirement), f"{path}.matchFields[{index}]"
        )
    return errors


def _weight(term: dict[str, Any], path: str) -> list[FieldError]:
    weight = opt_int(term.get("weight")) or 0
    if not 1 <= weight <= 100:
        return [invalid("POD-020", f"{path}.weight", weight, _WEIGHT)]
    return []


def validate_node_affinity(
    affinity: dict[str, Any], path: str, options: PodOptions
) -> list[FieldError]:
    """validateNodeAffinity (ValidateNodeSelector, ValidatePreferredSchedulingTerms)."""
    errors: list[FieldError] = []
    required_terms = affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    if isinstance(required_terms, dict):
        at = f"{path}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
        terms = as_list(required_terms.get("nodeSelectorTerms"))
        check_values = not options.allow_invalid_label_value_in_required_node_affinity
        if not terms:
            errors.append(required("POD-020", at, "must have at least one node selector term"))
        for index, term in enumerate(terms):
            errors += validate_node_selector_term(
                term, check_values, f"{at}[{index}]", options.version
            )
    at = f"{path}.preferredDuringSchedulingIgnoredDuringExecution"
    for index, term in enumerate(
        as_list(affinity.get("preferredDuringSchedulingIgnoredDuringExecution"))
    ):
        term = as_dict(term)
        errors += _weight(term, f"{at}[{index}]")
        errors += validate_node_selector_term(
            term.get("preference"), False, f"{at}[{index}].preference", options.version
        )
    return errors


def validate_pod_affinity_term(
    term: dict[str, Any], path: str, options: PodOptions
) -> list[FieldError]:
    """validatePodAffinityTerm."""
    rule = "POD-020"
    # ValidatePodAffinityTermSelector
    version = options.version
    selector_opts = LabelSelectorOptions(version, options.allow_invalid_label_value_in_selector)
    errors = validate_label_selector(
        rule, term.get("labelSelector"), selector_opts, f"{path}.labelSelector"
    )
    errors += validate_label_selector(
        rule, term.get("namespaceSelector"), selector_opts, f"{path}.namespaceSelector"
    )
    for namespace in as_list(term.get("namespaces")):
        if isinstance(namespace, str):
            errors += each(rule, f"{path}.namespace", namespace, label_problems(namespace))
    errors += validate_match_label_keys_and_mismatch_label_keys(
        rule,
        path,
        string_list(term.get("matchLabelKeys")),
        string_list(term.get("mismatchLabelKeys")),
        _selector_or_none(term.get("labelSelector")),
        version,
    )
    topology_key = text(term.get("topologyKey"))
    if topology_key is None:
        return errors
    if topology_key == "":
        errors.append(required(rule, f"{path}.topologyKey", "can not be empty"))
    return errors + list(
        each(rule, f"{path}.topologyKey", topology_key, label_wording(version).key(topology_key))
    )


def _selector_or_none(value: Any) -> dict[str, Any] | None:
    return value if isinstance(value, dict) else None


def validate_label_keys(
    rule: str,
    path: str,
    label_keys: list[str],
    label_selector: dict[str, Any] | None,
    version: str,
) -> list[FieldError]:
    """validateLabelKeys: matchLabelKeys or mismatchLabelKeys need a labelSelector and are
    label names."""
    if not label_keys:
        return []
    if label_selector is None:
        return [forbidden(rule, path, "must not be specified when labelSelector is not set")]
    words = label_wording(version)
    errors: list[FieldError] = []
    for index, key in enumerate(label_keys):
        errors += each(rule, f"{path}[{index}]", key, words.key(key))
    return errors


def validate_match_label_keys_and_mismatch_label_keys(
    rule: str,
    path: str,
    match_label_keys: list[str],
    mismatch_label_keys: list[str],
    label_selector: dict[str, Any] | None,
    version: str,
) -> list[FieldError]:
    """ValidateMatchLabelKeysAndMismatchLabelKeys. A key of matchLabelKeys conflicts with the
    selector only when a matchExpression names a key the selector already holds (upstream
    expects the keys merged into the selector first, as the pod strategy does; a template is
    not merged)."""
    errors = validate_label_keys(
        rule, f"{path}.matchLabelKeys", match_label_keys, label_selector, version
    )
    errors += validate_label_keys(
        rule, f"{path}.mismatchLabelKeys", mismatch_label_keys, label_selector, version
    )
    if label_selector is not None:
        positions = {key: index for index, key in enumerate(match_label_keys)}
        selector_keys = {
            k for k in as_dict(label_selector.get("matchLabels")) if isinstance(k, str)
        }
        for expression in as_list(label_selector.get("matchExpressions")):
            key = text(as_dict(expression).get("key"))
            if key is None:
                continue
            if key in positions and key in selector_keys:
                detail = "exists in both matchLabelKeys and labelSelector"
                errors.append(invalid(rule, f"{path}[{positions[key]}]", key, detail))
            selector_keys.add(key)
    mismatched = set(mismatch_label_keys)
    for index, key in enumerate(match_label_keys):
        if key in mismatched:
            detail = "exists in both matchLabelKeys and mismatchLabelKeys"
            errors.append(invalid(rule, f"{path}.matchLabelKeys[{index}]", key, detail))
    return errors


def validate_match_label_keys_in_topology_spread(
    rule: str,
    path: str,
    match_label_keys: list[str],
    label_selector: dict[str, Any] | None,
    version: str,
) -> list[FieldError]:
    """ValidateMatchLabelKeysInTopologySpread (the legacy check): label names, none of them a
    key of the selector."""
    if not match_label_keys:
        return []
    errors: list[FieldError] = []
    selector_keys: set[Any] = set()
    if label_selector is not None:
        selector_keys |= set(as_dict(label_selector.get("matchLabels")))
        selector_keys |= {
            text(as_dict(e).get("key")) for e in as_list(label_selector.get("matchExpressions"))
        }
    else:
        errors.append(forbidden(rule, path, "must not be specified when labelSelector is not set"))
    for index, key in enumerate(match_label_keys):
        at = f"{path}[{index}]"
        errors += each(rule, at, key, label_wording(version).key(key))
        if key in selector_keys:
            errors.append(invalid(rule, at, key, "exists in both matchLabelKeys and labelSelector"))
    return errors


def validate_pod_affinity(
    affinity: dict[str, Any], path: str, options: PodOptions
) -> list[FieldError]:
    """validatePodAffinity / validatePodAntiAffinity."""
    errors: list[FieldError] = []
    at = f"{path}.requiredDuringSchedulingIgnoredDuringExecution"
    for index, term in enumerate(
        as_list(affinity.get("requiredDuringSchedulingIgnoredDuringExecution"))
    ):
        errors += validate_pod_affinity_term(as_dict(term), f"{at}[{index}]", options)
    at = f"{path}.preferredDuringSchedulingIgnoredDuringExecution"
    for index, term in enumerate(
        as_list(affinity.get("preferredDuringSchedulingIgnoredDuringExecution"))
    ):
        term = as_dict(term)
        errors += _weight(term, f"{at}[{index}]")
        errors += validate_pod_affinity_term(
            as_dict(term.get("podAffinityTerm")), f"{at}[{index}].podAffinityTerm", options
        )
    return errors


def validate_affinity(value: Any, options: PodOptions, path: str) -> list[FieldError]:
    """validateAffinity."""
    affinity = as_dict(value)
    errors: list[FieldError] = []
    if isinstance(affinity.get("nodeAffinity"), dict):
        errors += validate_node_affinity(affinity["nodeAffinity"], f"{path}.nodeAffinity", options)
    for kind in ("podAffinity", "podAntiAffinity"):
        if isinstance(affinity.get(kind), dict):
            errors += validate_pod_affinity(affinity[kind], f"{path}.{kind}", options)
    return errors


# --- tolerations (POD-021) -----------------------------------------------------------------------

TAINT_EFFECTS = ["NoSchedule", "PreferNoSchedule", "NoExecute"]
NODE_INCLUSION_POLICIES = ["Honor", "Ignore"]


def _comparison_value(value: str, path: str) -> list[FieldError]:
    """An Lt/Gt toleration's value: content.IsDecimalInteger, then strconv.ParseInt."""
    rule = "POD-021"
    errors: list[FieldError] = []
    if _DECIMAL.fullmatch(value) is None:
        detail = "must be non-empty" if value == "" else _DECIMAL_MSG
        errors.append(invalid(rule, path, value, detail))
    if _GO_INT.fullmatch(value) is None:
        errors.append(
            invalid(rule, path, value, f'strconv.ParseInt: parsing "{value}": invalid syntax')
        )
    elif not -(2**63) <= int(value) < 2**63:
        detail = f'strconv.ParseInt: parsing "{value}": value out of range'
        errors.append(invalid(rule, path, value, detail))
    return errors


_DECIMAL = re.compile(r"0|-?[1-9][0-9]*")
_DECIMAL_MSG = "must be a valid decimal integer in canonical form"
_GO_INT = re.compile(r"[+-]?[0-9]+")


def validate_tolerations(value: Any, path: str, options: PodOptions) -> list[FieldError]:
    """ValidateTolerations (Lt and Gt: TaintTolerationComparisonOperators is alpha, off in
    every supported release; an UPDATE keeps them when the stored template has them)."""
    rule = "POD-021"
    words = label_wording(options.version)
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
            errors += each(rule, f"{at}.key", key, words.key(key))
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
            problems = words.value(toleration_value)
            if problems:
                errors.append(invalid(rule, f"{at}.operator", toleration_value, ";".join(problems)))
        elif operator == "Exists":
            if toleration_value:
                detail = "value must be empty when `operator` is 'Exists'"
                errors.append(invalid(rule, f"{at}.operator", toleration_value, detail))
        elif operator in ("Lt", "Gt") and options.toleration_operators_listed:
            if not options.allow_taint_toleration_comparison_operators:
                supported = ["Equal", "Exists", "Lt", "Gt"]
                errors.append(not_supported(rule, f"{at}.operator", operator, supported))
            else:
                errors += _comparison_value(toleration_value, f"{at}.value")
        else:
            errors.append(not_supported(rule, f"{at}.operator", operator, ["Equal", "Exists"]))
        if effect and effect not in TAINT_EFFECTS:
            errors.append(not_supported(rule, f"{at}.effect", effect, TAINT_EFFECTS))
    return errors


# --- topology spread (POD-022) -------------------------------------------------------------------


def validate_topology_spread_constraints(
    value: Any, path: str, options: PodOptions
) -> list[FieldError]:
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
            if isinstance(policy, str) and policy not in NODE_INCLUSION_POLICIES:
                errors.append(
                    not_supported(rule, f"{at}.{policy_name}", policy, NODE_INCLUSION_POLICIES)
                )
        errors += _spread_match_label_keys(constraint, at, options)
        if not options.allow_invalid_topology_spread_constraint_label_selector:
            errors += validate_label_selector(
                rule,
                constraint.get("labelSelector"),
                LabelSelectorOptions(options.version),
                f"{at}.labelSelector",
            )
    return errors


def _spread_match_label_keys(
    constraint: dict[str, Any], path: str, options: PodOptions
) -> list[FieldError]:
    """The matchLabelKeys check of validateTopologySpreadConstraints: the legacy function in
    1.33, the preferred one from 1.34 unless the stored template fails it."""
    keys = string_list(constraint.get("matchLabelKeys"))
    selector = _selector_or_none(constraint.get("labelSelector"))
    merge = options.topology_selector_merge
    if (merge and not options.old_pod_violates_match_label_keys_validation) or (
        not merge and options.old_pod_violates_legacy_match_label_keys_validation
    ):
        return validate_match_label_keys_and_mismatch_label_keys(
            "POD-022", path, keys, [], selector, options.version
        )
    return validate_match_label_keys_in_topology_spread(
        "POD-022", f"{path}.matchLabelKeys", keys, selector, options.version
    )


# --- scalar fields (POD-024) ---------------------------------------------------------------------

RESTART_POLICIES = ["Always", "OnFailure", "Never"]
PREEMPTION_POLICIES = ["PreemptLowerPriority", "Never"]


def validate_restart_policy(value: Any, path: str, options: PodOptions) -> list[FieldError]:
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


def validate_readiness_gates(value: Any, path: str, options: PodOptions) -> list[FieldError]:
    """validateReadinessGates."""
    words = label_wording(options.version)
    errors: list[FieldError] = []
    for index, gate in enumerate(as_list(value)):
        condition = text(as_dict(gate).get("conditionType"))
        if condition is not None:
            at = f"{path}[{index}].conditionType"
            errors += each("POD-024", at, condition, words.key(condition))
    return errors


def validate_scheduling_gates(value: Any, path: str, options: PodOptions) -> list[FieldError]:
    """validateSchedulingGates."""
    words = label_wording(options.version)
    errors: list[FieldError] = []
    seen: set[str] = set()
    for index, gate in enumerate(as_list(value)):
        name = text(as_dict(gate).get("name"))
        if name is None:
            continue
        errors += each("POD-024", f"{path}[{index}]", name, words.key(name))
        if name in seen:
            errors.append(duplicate("POD-024", f"{path}[{index}]", name))
        seen.add(name)
    return errors


def validate_service_account_node_name_and_deadline(
    spec: dict[str, Any], path: str, options: PodOptions
) -> list[FieldError]:
    """ValidatePodSpec: serviceAccountName, nodeName, activeDeadlineSeconds."""
    errors = _subdomain_field(spec, "serviceAccountName", path)
    errors += _subdomain_field(spec, "nodeName", path)
    deadline = opt_int(spec.get("activeDeadlineSeconds"))
    if deadline is not None and not 1 <= deadline <= 2147483647:
        detail = inclusive_range_error(1, 2147483647)
        errors.append(invalid("POD-024", f"{path}.activeDeadlineSeconds", deadline, detail))
    return errors


def validate_priority_fields(
    spec: dict[str, Any], path: str, options: PodOptions
) -> list[FieldError]:
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
        elif policy not in PREEMPTION_POLICIES:
            errors.append(not_supported("POD-024", at, policy, PREEMPTION_POLICIES))
    return errors
