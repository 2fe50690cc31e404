"""The configuration as ValidatingAdmissionPolicies, for clusters that want no webhook.

`export_vap(Settings) -> VapExport`: `admissionregistration.k8s.io/v1` ValidatingAdmissionPolicy
and ValidatingAdmissionPolicyBinding objects for the suspend policies (SUS) and the suspend
semantics rules (NE) that are enabled, one policy and one binding per rule (and per suspend
policy), and for every rule whether it was exported and why (not). Pure: no I/O.

How the webhook's judgement maps onto a policy:
* enforcement deny / warn / dryrun -> the binding's validationActions Deny / Warn / Audit;
* the resource and operation a rule judges -> `matchConstraints.resourceRules` (`jobs`, or
  `jobs/status` for the status rules, whose policies fail open like the status webhook);
* exempt namespaces -> `matchConstraints.namespaceSelector` (exact names) and a match condition
  (globs); exempt users, groups and service accounts and a policy's controllers -> match
  conditions on `request.userInfo`;
* a suspend policy's namespaces and labelSelector -> `namespaceSelector` (exact names) and
  `objectSelector` as pre-filters, and a match condition that says the policy is the one that
  applies: the first whose match fits (for an UPDATE, the stored Job's first match, else the new
  object's), exactly as `PolicySet.policy_for` decides, so overlapping policies agree too;
* messages are the webhook's, prefixed by the rule ID ("SUS-002: spec.suspend: Forbidden: ...").

The CEL uses the standard macros and functions (`has`, `exists`, `all`, `filter`, `size`, `in`,
`matches`, `string`), string concatenation, and optional field selection (`?.`, `orValue`):
every supported Kubernetes version's CEL environment offers them, and so does Google's cel-cpp
with its optional extension, which the tests use to evaluate the export. A comprehension over a
one-element list (`[expr].all(labels, ...)`) names a Job's labels once. Objects are read as the
API server passes them to a policy: defaulted (a Job without labels has its template's), with
absent fields absent, not null.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from jobguard.validators.catalog import RULES, Enforcement, RuleInfo
from jobguard.validators.errors import forbidden
from jobguard.validators.globs import glob_regex, is_glob
from jobguard.validators.podtemplate import SCHEDULING_DIRECTIVES
from jobguard.validators.policy import PolicySet, Subjects, SuspendPolicy
from jobguard.validators.settings import Settings
from jobguard.validators.versions import NE009_MESSAGE

API_VERSION = "admissionregistration.k8s.io/v1"
VALIDATION_ACTIONS = {
    Enforcement.DENY: "Deny",
    Enforcement.WARN: "Warn",
    Enforcement.DRYRUN: "Audit",
}
RULE_ANNOTATION = "jobguard.io/rule"
POLICY_ANNOTATION = "jobguard.io/suspend-policy"
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"


@dataclass(frozen=True, slots=True)
class ExportEntry:
    """One rule (or the mutation of one suspend policy): exported or not, and why."""

    subject: str
    """A rule ID, or "forceSuspendOnCreate (policy 'NAME')"."""
    exported: bool
    reason: str
    objects: tuple[str, ...] = ()
    """The names of the ValidatingAdmissionPolicies that carry it."""


@dataclass(slots=True)
class VapExport:
    version: str
    """The Kubernetes version the export targets (the configuration's)."""
    objects: list[dict[str, Any]] = field(default_factory=list)
    """Each ValidatingAdmissionPolicy followed by its binding."""
    entries: list[ExportEntry] = field(default_factory=list)

    @property
    def exported(self) -> list[ExportEntry]:
        return [e for e in self.entries if e.exported]

    @property
    def not_exported(self) -> list[ExportEntry]:
        return [e for e in self.entries if not e.exported]


# --- CEL building blocks ------------------------------------------------------------------------


def cel_string(value: str) -> str:
    """A CEL string literal."""
    escaped = value.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n")
    return f"'{escaped}'"


def cel_list(values: Iterable[str]) -> str:
    return "[" + ", ".join(cel_string(v) for v in values) + "]"


def _not(expression: str) -> str:
    return f"!({expression})"


def _any_of(terms: list[str], empty: str = "false") -> str:
    if not terms:
        return empty
    return terms[0] if len(terms) == 1 else "(" + " || ".join(terms) + ")"


def _all_of(terms: list[str]) -> str:
    terms = [t for t in terms if t != "true"]
    if not terms:
        return "true"
    return terms[0] if len(terms) == 1 else "(" + " && ".join(terms) + ")"


def _names_match(value: str, patterns: Iterable[str]) -> str:
    """`value` (a CEL string expression) matches one of the globs."""
    patterns = list(patterns)
    exact = [p for p in patterns if not is_glob(p)]
    globs = [p for p in patterns if is_glob(p)]
    terms = [f"{value} in {cel_list(exact)}"] if exact else []
    terms += [f"{value}.matches({cel_string(glob_regex(g))})" for g in globs]
    return _any_of(terms)


def _subjects(subjects: Subjects) -> str:
    """The requester is one of `subjects` (as `Subjects.includes` decides)."""
    names = [*subjects.users, *(f"system:serviceaccount:{sa}" for sa in subjects.service_accounts)]
    terms = [f"request.userInfo.username in {cel_list(names)}"] if names else []
    if subjects.groups:
        terms.append(f"request.userInfo.groups.exists(g, g in {cel_list(subjects.groups)})")
    return _any_of(terms)


def job_labels(root: str) -> str:
    """A Job's labels, its template's when it has none (v1 defaulting)."""
    return (
        f"(size({root}.metadata.?labels.orValue({{}})) > 0 ? {root}.metadata.labels : "
        f"{root}.spec.?template.?metadata.?labels.orValue({{}}))"
    )


def _present(key: str, labels: str) -> str:
    """The label `key` (a CEL string) is set to a non-empty value: a label with an empty value
    counts as absent (`policy.present_labels`, as Kueue reads an empty queue name)."""
    return f"({key} in {labels} && {labels}[{key}] != '')"


def _selector(selector: Any, labels: str) -> str:
    """A LabelSelector (as `selectors.selector_matches` reads it) on a labels expression, with
    empty-valued labels absent."""
    if selector is None:
        return "true"
    terms = []
    for key, value in (selector.get("matchLabels") or {}).items():
        k = cel_string(key)
        terms.append(f"({_present(k, labels)} && {labels}[{k}] == {cel_string(value)})")
    for requirement in selector.get("matchExpressions") or []:
        k = cel_string(requirement.get("key", ""))
        values = cel_list(requirement.get("values") or [])
        operator = requirement.get("operator")
        if operator == "In":
            terms.append(f"({_present(k, labels)} && {labels}[{k}] in {values})")
        elif operator == "NotIn":
            terms.append(f"!({_present(k, labels)} && {labels}[{k}] in {values})")
        elif operator == "Exists":
            terms.append(_present(k, labels))
        elif operator == "DoesNotExist":
            terms.append(_not(_present(k, labels)))
        else:
            terms.append("false")
    return _all_of(terms)


def _policy_matches(policy: SuspendPolicy, labels: str) -> str:
    namespace = (
        "true"
        if policy.namespaces is None
        else _names_match("request.namespace", policy.namespaces)
    )
    return _all_of([namespace, _selector(policy.label_selector, labels)])


def _first_match(policies: PolicySet, index: int, labels: str) -> str:
    """Policy `index` is the first whose match fits `labels` (`PolicySet.policy_for`)."""
    earlier = [_not(_policy_matches(p, labels)) for p in policies.policies[:index]]
    return _all_of([_policy_matches(policies.policies[index], labels), *earlier])


def _any_match(policies: PolicySet, labels: str) -> str:
    return _any_of([_policy_matches(p, labels) for p in policies.policies])


def _with_labels(root: str, name: str, expression: str) -> str:
    """`expression` with `name` bound to the Job's labels."""
    return f"[{job_labels(root)}].all({name}, {expression})"


_SUSPEND = "object.spec.?suspend.orValue(false)"
_OLD_SUSPEND = "oldObject.spec.?suspend.orValue(false)"
_RESUMED = f"({_OLD_SUSPEND} && !{_SUSPEND})"
_SUSPENDED = f"(!{_OLD_SUSPEND} && {_SUSPEND})"


def _conditions(root: str) -> str:
    return f"{root}.status.?conditions.orValue([])"


def _condition_true(root: str, types: list[str]) -> str:
    return f"{_conditions(root)}.exists(c, c.type in {cel_list(types)} && c.status == 'True')"


def _finished(root: str) -> str:
    return _condition_true(root, ["Complete", "Failed"])


def _scheduling_changed() -> str:
    """TM-002's directives differ (as `podtemplate.scheduling_directives_changed` decides)."""
    terms = []
    for directive in SCHEDULING_DIRECTIVES:
        path = ".".join(f"?{key}" for key in directive.path)
        empty = "[]" if directive.is_list else "{}"
        terms.append(
            f"oldObject.spec.template.{path}.orValue({empty}) != "
            f"object.spec.template.{path}.orValue({empty})"
        )
    return "(" + " || ".join(terms) + ")"


def _message(rule: str, path: str, detail: str) -> str:
    return f"{rule}: {forbidden(rule, path, detail).message()}"


# --- objects ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Spec:
    """One policy to build: the rule it carries and what it matches."""

    rule: str
    name: str
    resource: str
    operations: tuple[str, ...]
    validation: dict[str, str]
    match_conditions: tuple[tuple[str, str], ...] = ()
    variables: tuple[tuple[str, str], ...] = ()
    suspend_policy: str | None = None
    namespace_selector: dict[str, Any] | None = None
    object_selector: dict[str, Any] | None = None
    with_status: bool = False
    """Also `jobs/status`: the status strategy stores new labels, so relabels are judged there."""


def object_name(*parts: str) -> str:
    """A DNS subdomain name: "jobguard-" and the parts, lower-cased, unusable characters as "-"
    (with a short hash of the original when anything had to change)."""
    raw = "-".join(("jobguard", *parts))
    name = re.sub(r"[^a-z0-9.-]+", "-", raw.lower()).strip("-.")
    if name != raw:
        name = f"{name[:200]}-{hashlib.sha256(raw.encode()).hexdigest()[:8]}"
    return name


def _objects(spec: _Spec, enforcement: Enforcement) -> list[dict[str, Any]]:
    annotations = {RULE_ANNOTATION: spec.rule}
    if spec.suspend_policy is not None:
        annotations[POLICY_ANNOTATION] = spec.suspend_policy
    metadata = {
        "name": spec.name,
        "labels": {"app.kubernetes.io/managed-by": "jobguard"},
        "annotations": annotations,
    }
    constraints: dict[str, Any] = {
        "resourceRules": [
            {
                "apiGroups": ["batch"],
                "apiVersions": ["v1"],
                "operations": list(spec.operations),
                "resources": [spec.resource, "jobs/status"]
                if spec.with_status
                else [spec.resource],
                "scope": "Namespaced",
            }
        ],
        "matchPolicy": "Equivalent",
    }
    if spec.namespace_selector is not None:
        constraints["namespaceSelector"] = spec.namespace_selector
    if spec.object_selector is not None:
        constraints["objectSelector"] = spec.object_selector
    policy_spec: dict[str, Any] = {
        # Status policies fail open, like the status webhook: never stall the Job controller.
        "failurePolicy": "Ignore" if spec.resource == "jobs/status" else "Fail",
        "matchConstraints": constraints,
    }
    if spec.match_conditions:
        policy_spec["matchConditions"] = [
            {"name": name, "expression": expression} for name, expression in spec.match_conditions
        ]
    if spec.variables:
        policy_spec["variables"] = [
            {"name": name, "expression": expression} for name, expression in spec.variables
        ]
    policy_spec["validations"] = [{**spec.validation, "reason": "Forbidden"}]
    policy = {
        "apiVersion": API_VERSION,
        "kind": "ValidatingAdmissionPolicy",
        "metadata": metadata,
        "spec": policy_spec,
    }
    binding = {
        "apiVersion": API_VERSION,
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {**metadata, "annotations": dict(annotations)},
        "spec": {
            "policyName": spec.name,
            "validationActions": [VALIDATION_ACTIONS[enforcement]],
        },
    }
    return [policy, binding]


# --- suspend policies (SUS) ---------------------------------------------------------------------


def _exemption_conditions(
    policies: PolicySet, *, controllers: bool = True
) -> list[tuple[str, str]]:
    """The requester is not exempt (`Exemptions.exempt`; with `controllers` False, not exempt
    for any reason but being a built-in controller: `exempt_beyond_controllers`). Exact
    namespace names are the namespace selector's."""
    exemptions = policies.exemptions
    globs = [n for n in exemptions.namespaces if is_glob(n)]
    built_in = exemptions.built_in if controllers else Subjects(groups=exemptions.built_in.groups)
    exempt = [_subjects(exemptions.subjects), _subjects(built_in)]
    if globs:
        exempt.append(_names_match("request.namespace", globs))
    condition = _any_of([t for t in exempt if t != "false"])
    return [] if condition == "false" else [("not-exempt", _not(condition))]


def _namespace_selector(exempt: list[str], included: list[str] | None) -> dict[str, Any] | None:
    """Exact namespace names as a namespaceSelector (globs are left to the match conditions)."""
    expressions = []
    if included is not None:
        expressions.append({"key": NAMESPACE_NAME_LABEL, "operator": "In", "values": included})
    if exempt:
        expressions.append({"key": NAMESPACE_NAME_LABEL, "operator": "NotIn", "values": exempt})
    return {"matchExpressions": expressions} if expressions else None


@dataclass(frozen=True, slots=True)
class _PolicyScope:
    """What every SUS policy of one suspend policy shares: who it lets act, and what it matches."""

    policies: PolicySet
    index: int
    common: tuple[tuple[str, str], ...]
    """Match conditions: the requester is neither exempt nor one of the policy's controllers."""
    selectors: dict[str, Any]
    """The `_Spec` fields naming the suspend policy and its namespace and object selectors."""
    on_update: tuple[tuple[str, str], ...]
    """Match conditions of an UPDATE the policy judges (`common`, and the policy applies)."""

    @property
    def policy(self) -> SuspendPolicy:
        return self.policies.policies[self.index]

    @property
    def name(self) -> str:
        return self.policy.name

    @property
    def who(self) -> str:
        return self.policy.controllers.describe()


def _policy_scope(policies: PolicySet, index: int) -> _PolicyScope:
    policy = policies.policies[index]
    common = _exemption_conditions(policies)
    controllers = _subjects(policy.controllers)
    if controllers != "false":
        common.append(("not-a-controller", _not(controllers)))
    exact_exempt = [n for n in policies.exemptions.namespaces if not is_glob(n)]
    own = policy.namespaces
    exact_own = list(own) if own is not None and not any(is_glob(n) for n in own) else None
    selectors: dict[str, Any] = {
        "suspend_policy": policy.name,
        "namespace_selector": _namespace_selector(exact_exempt, exact_own),
        "object_selector": policy.object_selector(),
    }
    first_old = _first_match(policies, index, "old")
    applies = _with_labels(
        "oldObject",
        "old",
        _with_labels(
            "object",
            "new",
            f"({first_old} || (!{_any_match(policies, 'old')} && "
            f"{_first_match(policies, index, 'new')}))",
        ),
    )
    return _PolicyScope(
        policies, index, tuple(common), selectors, (*common, ("policy-applies", applies))
    )


def _created(scope: _PolicyScope) -> str:
    """A CREATE the policy judges: it is the first whose match fits the new Job."""
    return _with_labels("object", "labels", _first_match(scope.policies, scope.index, "labels"))


def _sus_001(scope: _PolicyScope) -> _Spec | None:
    detail = (
        f"jobs matched by policy '{scope.name}' must be created suspended (spec.suspend: true); "
        f"only {scope.who} may create them running"
    )
    return _Spec(
        "SUS-001",
        object_name("sus-001", scope.name),
        "jobs",
        ("CREATE",),
        {
            "expression": f"{_SUSPEND} == true",
            "message": _message("SUS-001", "spec.suspend", detail),
        },
        (*scope.common, ("policy-applies", _created(scope))),
        **scope.selectors,
    )


def _built_in_controllers(policies: PolicySet) -> str:
    """The requester is a built-in controller (users and service accounts, not groups)."""
    built_in = policies.exemptions.built_in
    return _subjects(Subjects(built_in.users, (), built_in.service_accounts))


def _sus_008(scope: _PolicyScope) -> _Spec | None:
    built_in_controllers = _built_in_controllers(scope.policies)
    if not scope.policy.force_suspend_on_create or built_in_controllers == "false":
        return None
    # The requesters SUS-001 leaves alone as built-in controllers: no mutating webhook suspends
    # their CREATEs here, so a CronJob's matched Jobs must be suspended in its jobTemplate.
    detail = (
        f"jobs matched by policy '{scope.name}' are created suspended by jobguard's mutating "
        "webhook, which did not suspend this one (unavailable or refused); "
    )
    only = (
        f" acts for others and cannot start it without the queue: only {scope.who} may create "
        "it running"
    )
    prefix = _message("SUS-008", "spec.suspend", detail)
    conditions = _exemption_conditions(scope.policies, controllers=False)
    controllers = _subjects(scope.policy.controllers)
    if controllers != "false":
        conditions.append(("not-a-controller", _not(controllers)))
    return _Spec(
        "SUS-008",
        object_name("sus-008", scope.name),
        "jobs",
        ("CREATE",),
        {
            "expression": f"{_SUSPEND} == true",
            "messageExpression": f"{cel_string(prefix)} + request.userInfo.username + "
            f"{cel_string(only)}",
        },
        (
            *conditions,
            ("a-built-in-controller", built_in_controllers),
            ("policy-applies", _created(scope)),
        ),
        **scope.selectors,
    )


def _controllers_only(
    scope: _PolicyScope, rule: str, changed: str, path: str, detail: str
) -> _Spec:
    """An update only the policy's controllers may make: the change forbidden, where, and why."""
    message = _message(rule, path, f"{detail} matched by policy '{scope.name}'")
    return _Spec(
        rule,
        object_name(rule.lower(), scope.name),
        "jobs",
        ("UPDATE",),
        {"expression": f"!{changed}", "message": message},
        scope.on_update,
        **scope.selectors,
    )


def _sus_002(scope: _PolicyScope) -> _Spec | None:
    return _controllers_only(
        scope, "SUS-002", _RESUMED, "spec.suspend", f"only {scope.who} may resume jobs"
    )


def _sus_003(scope: _PolicyScope) -> _Spec | None:
    if scope.policy.users_may_suspend:
        return None
    return _controllers_only(
        scope, "SUS-003", _SUSPENDED, "spec.suspend", f"only {scope.who} may suspend jobs"
    )


def _sus_004(scope: _PolicyScope) -> _Spec | None:
    return _controllers_only(
        scope,
        "SUS-004",
        _scheduling_changed(),
        "spec.template",
        f"only {scope.who} may change scheduling directives of jobs",
    )


def _sus_005(scope: _PolicyScope) -> _Spec | None:
    name, policies, index = scope.name, scope.policies, scope.index
    keys = scope.policy.selected_keys()
    detail = (
        f"a job matched by policy '{name}' cannot be relabelled out of it "
        f"({', '.join(keys) or 'its labels'}); only {scope.who} may do that"
    )
    same_keys = [
        f"(({cel_string(k)} in variables.oldLabels) == ({cel_string(k)} in variables.newLabels)"
        f" && (!({cel_string(k)} in variables.oldLabels) || "
        f"variables.oldLabels[{cel_string(k)}] == variables.newLabels[{cel_string(k)}]))"
        for k in keys
    ]
    stays = _with_labels("object", "new", _first_match(policies, index, "new"))
    first_old = _first_match(policies, index, "old")
    return _Spec(
        "SUS-005",
        object_name("sus-005", name),
        "jobs",
        ("UPDATE",),
        {
            "expression": f"{_finished('oldObject')} || "
            f"(variables.staysInPolicy && {_all_of(same_keys)})",
            "message": _message("SUS-005", "metadata.labels", detail),
        },
        (
            *scope.common,
            ("matched-before", _with_labels("oldObject", "old", first_old)),
        ),
        (
            ("oldLabels", job_labels("oldObject")),
            ("newLabels", job_labels("object")),
            ("staysInPolicy", stays),
        ),
        **scope.selectors,
        with_status=True,
    )


def _sus_009(scope: _PolicyScope) -> _Spec | None:
    name, policies, index = scope.name, scope.policies, scope.index
    keys = ", ".join(scope.policy.selected_keys()) or "its labels"
    detail = (
        f"a running job cannot be relabelled into policy '{name}' ({keys}): it would run "
        f"without its controllers' admission; suspend it first, or only {scope.who} may do that"
    )
    comes_in = _with_labels(
        "oldObject",
        "old",
        _with_labels(
            "object",
            "new",
            f"(!{_any_match(policies, 'old')} && {_first_match(policies, index, 'new')})",
        ),
    )
    return _Spec(
        "SUS-009",
        object_name("sus-009", name),
        "jobs",
        ("UPDATE",),
        {
            "expression": f"{_finished('oldObject')} || {_SUSPEND}",
            "message": _message("SUS-009", "metadata.labels", detail),
        },
        (*scope.common, ("comes-into-policy", comes_in)),
        **scope.selectors,
        with_status=True,
    )


def _sus_006(scope: _PolicyScope) -> _Spec | None:
    par = ("object.spec.?parallelism.orValue(0)", "oldObject.spec.?parallelism.orValue(0)")
    com = ("object.spec.?completions.orValue(0)", "oldObject.spec.?completions.orValue(0)")
    indexed = "object.spec.?completionMode.orValue('NonIndexed') == 'Indexed'"
    field = "(variables.raisedParallelism ? 'parallelism' : 'completions')"
    before = f"(variables.raisedParallelism ? {par[1]} : {com[1]})"
    after = f"(variables.raisedParallelism ? {par[0]} : {com[0]})"
    message = (
        f"'SUS-006: spec.' + {field} + ': Forbidden: only ' + {cel_string(scope.who)} + "
        f"' may raise ' + {field} + ' (' + string({before}) + ' -> ' + string({after}) + "
        f"') of running jobs matched by policy ' + {cel_string(repr(scope.name))}"
    )
    return _Spec(
        "SUS-006",
        object_name("sus-006", scope.name),
        "jobs",
        ("UPDATE",),
        {
            # A suspended Job is re-admitted by the queue before it runs again.
            "expression": f"{_finished('oldObject')} || {_SUSPEND} || "
            f"!(variables.raisedParallelism || ({indexed} && {com[0]} > {com[1]}))",
            "messageExpression": message,
        },
        scope.on_update,
        (("raisedParallelism", f"{par[0]} > {par[1]}"),),
        **scope.selectors,
    )


SUS_BUILDERS: Mapping[str, Callable[[_PolicyScope], _Spec | None]] = {
    "SUS-001": _sus_001,
    "SUS-008": _sus_008,
    "SUS-002": _sus_002,
    "SUS-003": _sus_003,
    "SUS-004": _sus_004,
    "SUS-005": _sus_005,
    "SUS-006": _sus_006,
    "SUS-009": _sus_009,
}
"""The CEL of each exported SUS rule (`RuleInfo.vap`), built once per suspend policy, in the
order the export writes them; None where the policy needs none."""


def _no_user_suspension(policies: PolicySet) -> str:
    return "every suspend policy lets users suspend (usersMaySuspend: true)"


def _no_forced_suspension(policies: PolicySet) -> str:
    if not any(p.force_suspend_on_create for p in policies.policies):
        return "no suspend policy sets forceSuspendOnCreate"
    return (
        "the built-in controllers are not exempt (exemptions.builtIn: false): SUS-001 "
        "judges their CREATEs"
    )


NOT_BUILT: Mapping[str, Callable[[PolicySet], str]] = {
    "SUS-003": _no_user_suspension,
    "SUS-008": _no_forced_suspension,
}
"""Why an enabled SUS rule whose builder can decline built nothing for the suspend policies."""


# --- suspend semantics (NE) ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _NeScope:
    """What every NE policy shares: exempt requesters and namespaces are judged by no policy
    rule (NE and SUS alike)."""

    settings: Settings
    match_conditions: tuple[tuple[str, str], ...]
    namespace_selector: dict[str, Any] | None

    def spec(
        self, rule: str, resource: str, operations: tuple[str, ...], validation: dict[str, str]
    ) -> _Spec:
        return _Spec(
            rule,
            object_name(rule.lower()),
            resource,
            operations,
            validation,
            self.match_conditions,
            namespace_selector=self.namespace_selector,
        )


def _ne_scope(settings: Settings) -> _NeScope:
    exemptions = settings.policies.exemptions
    exact_exempt = [n for n in exemptions.namespaces if not is_glob(n)]
    return _NeScope(
        settings,
        tuple(_exemption_conditions(settings.policies)),
        _namespace_selector(exact_exempt, None),
    )


_SUSPENDED_TRUE = (
    "{root}.status.?conditions.orValue([]).exists(c, c.type == 'Suspended' && c.status == 'True')"
)
_NEW_SUSPENDED_TRUE = _SUSPENDED_TRUE.format(root="object")
_OLD_SUSPENDED_TRUE = _SUSPENDED_TRUE.format(root="oldObject")


def _ne_001(scope: _NeScope) -> _Spec | str:
    return scope.spec(
        "NE-001",
        "jobs",
        ("UPDATE",),
        {
            "expression": f"!({_finished('oldObject')} && {_SUSPENDED})",
            "message": _message("NE-001", "spec.suspend", "a finished Job cannot be suspended"),
        },
    )


def _ne_002(scope: _NeScope) -> _Spec | str:
    return scope.spec(
        "NE-002",
        "jobs/status",
        ("UPDATE",),
        {
            "expression": f"!{_conditions('oldObject')}.exists(c, c.type == 'Suspended') || "
            f"size({_conditions('object')}.filter(c, c.type == 'Suspended')) == 1",
            "message": _message(
                "NE-002",
                "status.conditions",
                "the Suspended condition must be kept (set to False on resume), exactly once",
            ),
        },
    )


def _ne_003(scope: _NeScope) -> _Spec | str:
    return scope.spec(
        "NE-003",
        "jobs/status",
        ("UPDATE",),
        {
            "expression": f"!({_NEW_SUSPENDED_TRUE} && !{_OLD_SUSPENDED_TRUE} && "
            "object.status.?active.orValue(0) > 0)",
            "message": _message(
                "NE-003",
                "status.conditions",
                "Suspended=True may be set only after all active pods have terminated",
            ),
        },
    )


def _ne_004(scope: _NeScope) -> _Spec | str:
    resuming = (
        f"({_OLD_SUSPENDED_TRUE} && {_conditions('object')}"
        ".exists(c, c.type == 'Suspended' && c.status == 'False'))"
    )
    return scope.spec(
        "NE-004",
        "jobs/status",
        ("UPDATE",),
        {
            "expression": "!(oldObject.status.?startTime.orValue('') != "
            f"object.status.?startTime.orValue('') && {_SUSPEND} && !{resuming})",
            "message": _message(
                "NE-004",
                "status.startTime",
                "startTime is set when the Job is resumed, not while it is suspended",
            ),
        },
    )


def _ne_005(scope: _NeScope) -> _Spec | str:
    return scope.spec(
        "NE-005",
        "jobs",
        ("UPDATE",),
        {
            "expression": f"!({_RESUMED} && has(object.spec.activeDeadlineSeconds))",
            "message": _message(
                "NE-005",
                "spec.activeDeadlineSeconds",
                "activeDeadlineSeconds measures time since the last resume and restarts now",
            ),
        },
    )


def _ne_006(scope: _NeScope) -> _Spec | str:
    return scope.spec(
        "NE-006",
        "jobs",
        ("UPDATE",),
        {
            "expression": f"!({_SUSPENDED} && oldObject.status.?active.orValue(0) > 0)",
            "messageExpression": cel_string(
                "NE-006: spec.suspend: Forbidden: suspending deletes the Job's "
            )
            + " + string(oldObject.status.active) + "
            + cel_string(" active pods; they do not count towards completions"),
        },
    )


def _ne_007(scope: _NeScope) -> _Spec | str:
    params = scope.settings.params.get("NE-007", {})
    users = [str(u) for u in params.get("users") or []]
    groups = [str(g) for g in params.get("groups") or []]
    listed = _any_of(
        [
            t
            for t in (
                _names_match("request.userInfo.username", users),
                f"request.userInfo.groups.exists(g, g in {cel_list(groups)})"
                if groups
                else "false",
            )
            if t != "false"
        ]
    )
    return scope.spec(
        "NE-007",
        "jobs",
        ("UPDATE",),
        {
            # A CREATE is not a change: whether a Job starts suspended is SUS-001's business.
            "expression": f"{_OLD_SUSPEND} == {_SUSPEND} || {listed}",
            "messageExpression": '"NE-007: spec.suspend: Forbidden: user \'" + '
            'request.userInfo.username + "\' may not change spec.suspend"',
        },
    )


def _ne_008(scope: _NeScope) -> _Spec | str:
    newly_complete = (
        f"({_condition_true('object', ['Complete'])} && "
        f"!{_condition_true('oldObject', ['Complete'])})"
    )
    newly_failed = (
        f"({_condition_true('object', ['Failed'])} && !{_condition_true('oldObject', ['Failed'])})"
    )
    return scope.spec(
        "NE-008",
        "jobs/status",
        ("UPDATE",),
        {
            "expression": f"!(({newly_complete} || {newly_failed}) && {_NEW_SUSPENDED_TRUE})",
            "messageExpression": "'NE-008: status.conditions: Forbidden: cannot add the ' + "
            f"({newly_complete} ? 'Complete' : 'Failed') + '=True condition while Suspended=True'",
        },
    )


def _ne_009(scope: _NeScope) -> _Spec | str:
    semantics = scope.settings.semantics
    if semantics.mutable_scheduling_directives_for_suspended_jobs:
        return (
            f"never fires on Kubernetes {semantics.version}: scheduling directives "
            "of a suspended Job that ran are mutable there (KEP-5440)"
        )
    return scope.spec(
        "NE-009",
        "jobs",
        ("UPDATE",),
        {
            "expression": f"!({_OLD_SUSPEND} && has(oldObject.status.startTime) && "
            f"{_scheduling_changed()})",
            "message": _message(
                "NE-009",
                "spec.template",
                NE009_MESSAGE,
            ),
        },
    )


NE_BUILDERS: Mapping[str, Callable[[_NeScope], _Spec | str]] = {
    "NE-001": _ne_001,
    "NE-002": _ne_002,
    "NE-003": _ne_003,
    "NE-004": _ne_004,
    "NE-005": _ne_005,
    "NE-006": _ne_006,
    "NE-007": _ne_007,
    "NE-008": _ne_008,
    "NE-009": _ne_009,
}
"""The CEL of each exported NE rule (`RuleInfo.vap`), or why the configuration's Kubernetes
version needs none."""


# --- the export ---------------------------------------------------------------------------------


def export_vap(settings: Settings) -> VapExport:
    """Every enabled SUS and NE rule CEL can express, as policies and bindings; every rule with
    whether it was exported and why (not)."""
    export = VapExport(settings.semantics.version)
    enabled = {rule.id for rule in RULES if settings.enabled(rule.id)}
    policies = settings.policies
    built: list[_Spec] = []
    for index in range(len(policies.policies)):
        scope = _policy_scope(policies, index)
        for rule_id, build in SUS_BUILDERS.items():
            spec = build(scope) if rule_id in enabled else None
            if spec is not None:
                built.append(spec)
    ne_scope = _ne_scope(settings)
    ne_skipped: dict[str, str] = {}
    for rule_id, build_ne in NE_BUILDERS.items():
        if rule_id in enabled:
            result = build_ne(ne_scope)
            if isinstance(result, str):
                ne_skipped[rule_id] = result
            else:
                built.append(result)
    names_by_rule: dict[str, list[str]] = {}
    for spec in built:
        export.objects += _objects(spec, settings.rule(spec.rule).enforcement)
        names_by_rule.setdefault(spec.rule, []).append(spec.name)
    for rule in RULES:
        names = names_by_rule.get(rule.id)
        if names:
            action = VALIDATION_ACTIONS[settings.rule(rule.id).enforcement]
            reason = f"{settings.rule(rule.id).enforcement.value} -> {action}"
            export.entries.append(ExportEntry(rule.id, True, reason, tuple(names)))
        else:
            export.entries.append(ExportEntry(rule.id, False, _why_not(rule, settings, ne_skipped)))
    for policy in policies.policies:
        if policy.force_suspend_on_create:
            export.entries.append(
                ExportEntry(
                    f"forceSuspendOnCreate (policy '{policy.name}')",
                    False,
                    "the mutating webhook has no ValidatingAdmissionPolicy equivalent: without "
                    "it, unsuspended CREATEs are denied instead of suspended (SUS-001 for users, "
                    "SUS-008 for the built-in controllers: a CronJob's matched Jobs are created "
                    "only when its jobTemplate sets suspend: true)",
                )
            )
    return export


def _why_not(rule: RuleInfo, settings: Settings, ne_skipped: dict[str, str]) -> str:
    """Why a rule was not exported: the catalogue's reason for a rule never exported (upstream
    rules first: the API server enforces them whatever the configuration), else what in the
    configuration left it out."""
    if rule.upstream:
        return rule.vap.reason
    if not settings.enabled(rule.id):
        return "disabled in the configuration"
    if rule.id in ne_skipped:
        return ne_skipped[rule.id]
    if rule.needs_suspend_policies and not settings.policies.policies:
        return "no suspend policies are configured"
    if not rule.vap.exported:
        return rule.vap.reason
    not_built = NOT_BUILT.get(rule.id)
    assert not_built is not None, f"{rule.id}: exported, enabled, and built nothing"
    return not_built(settings.policies)
