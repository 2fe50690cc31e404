"""ValidatingAdmissionPolicy semantics on Google's cel-cpp (cel-expr-python), for the policies
`jobguard export vap` writes.

What the API server does with one request, as far as these policies use it: a policy is
considered when a resourceRule names the request's resource, subresource and operation, its
namespaceSelector selects the namespace's labels and its objectSelector the object's or the
old object's labels; then every matchCondition must hold, the variables are computed in order,
and each validation that is false yields its message (messageExpression first); the binding's
validationActions say what becomes of it. A CEL error is raised (`CelError`), never guessed.

Objects are passed as the API server passes them: after defaulting, so a Job without labels has
its template's (`defaulted`). CEL is evaluated dynamically (no OpenAPI types), as the API
server evaluates policies on built-in types.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field, replace
from typing import Any

from cel_expr_python import cel
from cel_expr_python.ext import ext_optional, ext_strings

_VARIABLES = ("object", "oldObject", "request", "params", "namespaceObject", "variables")
ENV = cel.NewEnv(
    variables={name: cel.Type.DYN for name in _VARIABLES},
    extensions=[ext_strings.ExtStrings(), ext_optional.ExtOptional()],
)
_COMPILED: dict[str, Any] = {}


class CelError(AssertionError):
    """An expression that does not compile or evaluate to what its place needs."""


@dataclass(frozen=True, slots=True)
class Call:
    """One admission request, as the API server hands it to the policies."""

    operation: str
    resource: str
    """"jobs" or "jobs/status"."""
    namespace: str
    object: Any
    old_object: Any = None
    username: str = "alice"
    groups: tuple[str, ...] = ("system:authenticated",)
    namespace_labels: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Decision:
    policy: str
    rule: str
    actions: tuple[str, ...]
    message: str


def defaulted(obj: Any) -> Any:
    """A Job as the API server's v1 defaulting leaves it: no labels means its template's."""
    if not isinstance(obj, dict) or obj.get("kind") not in (None, "Job"):
        return obj
    out = copy.deepcopy(obj)
    metadata = out.setdefault("metadata", {})
    if not metadata.get("labels"):
        template = out.get("spec", {}).get("template", {})
        labels = template.get("metadata", {}).get("labels")
        if labels:
            metadata["labels"] = dict(labels)
    return out


def evaluate(expression: str, activation: dict[str, Any]) -> Any:
    compiled = _COMPILED.get(expression)
    if compiled is None:
        try:
            compiled = _COMPILED[expression] = ENV.compile(expression)
        except RuntimeError as exc:
            raise CelError(f"does not compile: {expression}: {exc}") from None
    result = compiled.eval(data=activation)
    if result.type() == cel.Type.ERROR:
        raise CelError(f"evaluation error: {expression}: {result.value()}")
    return result.plain_value()


def _selects(selector: dict[str, Any] | None, labels: dict[str, str]) -> bool:
    """metav1.LabelSelector: nil and {} select everything here (matchConstraints semantics)."""
    for key, value in ((selector or {}).get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for requirement in (selector or {}).get("matchExpressions") or []:
        key, operator = requirement["key"], requirement["operator"]
        values = requirement.get("values") or []
        if operator == "In" and labels.get(key) not in values:
            return False
        if operator == "NotIn" and key in labels and labels[key] in values:
            return False
        if operator == "Exists" and key not in labels:
            return False
        if operator == "DoesNotExist" and key in labels:
            return False
    return True


def _labels(obj: Any) -> dict[str, str] | None:
    if not isinstance(obj, dict):
        return None
    labels: dict[str, str] = obj.get("metadata", {}).get("labels") or {}
    return labels


def _matches(policy: dict[str, Any], call: Call) -> bool:
    constraints = policy["spec"]["matchConstraints"]
    resource_ok = any(
        "batch" in rule["apiGroups"]
        and "v1" in rule["apiVersions"]
        and call.operation in rule["operations"]
        and call.resource in rule["resources"]
        for rule in constraints["resourceRules"]
    )
    if not resource_ok:
        return False
    namespace_labels = {"kubernetes.io/metadata.name": call.namespace, **call.namespace_labels}
    if not _selects(constraints.get("namespaceSelector"), namespace_labels):
        return False
    object_selector = constraints.get("objectSelector")
    candidates = [
        labels for labels in (_labels(call.object), _labels(call.old_object)) if labels is not None
    ]
    return object_selector is None or any(_selects(object_selector, c) for c in candidates)


def decide(objects: list[dict[str, Any]], call: Call) -> list[Decision]:
    """Every policy's failed validation for one request, with its binding's actions."""
    subresource = call.resource.partition("/")[2]
    new, old = defaulted(call.object), defaulted(call.old_object)
    request: dict[str, Any] = {
        "operation": call.operation,
        "namespace": call.namespace,
        "name": (new or old or {}).get("metadata", {}).get("name", ""),
        "resource": {"group": "batch", "version": "v1", "resource": call.resource.split("/")[0]},
        "userInfo": {"username": call.username, "groups": list(call.groups)},
    }
    if subresource:  # the API server leaves an empty subResource out of `request`
        request["subResource"] = subresource
    actions = {
        o["spec"]["policyName"]: tuple(o["spec"]["validationActions"])
        for o in objects
        if o["kind"] == "ValidatingAdmissionPolicyBinding"
    }
    effective = replace(call, object=new, old_object=old)
    decisions = []
    for policy in objects:
        if policy["kind"] != "ValidatingAdmissionPolicy" or not _matches(policy, effective):
            continue
        activation: dict[str, Any] = {
            "object": new,
            "oldObject": old,
            "request": request,
            "params": None,
            "namespaceObject": None,
            "variables": {},
        }
        spec = policy["spec"]
        if not all(_boolean(c["expression"], activation) for c in spec.get("matchConditions", [])):
            continue
        variables: dict[str, Any] = {}
        for variable in spec.get("variables", []):
            variables[variable["name"]] = evaluate(
                variable["expression"], {**activation, "variables": variables}
            )
        activation["variables"] = variables
        for validation in spec["validations"]:
            if _boolean(validation["expression"], activation):
                continue
            message = validation.get("message", "")
            if "messageExpression" in validation:
                message = evaluate(validation["messageExpression"], activation)
            name = policy["metadata"]["name"]
            rule = policy["metadata"]["annotations"]["jobguard.io/rule"]
            decisions.append(Decision(name, rule, actions.get(name, ()), message))
    return decisions


def _boolean(expression: str, activation: dict[str, Any]) -> bool:
    value = evaluate(expression, activation)
    if not isinstance(value, bool):
        raise CelError(f"not a boolean: {expression}: {value!r}")
    return value
