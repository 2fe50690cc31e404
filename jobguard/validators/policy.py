"""Suspend policies: who may create unsuspended, resume, suspend and re-place matched Jobs, and
the exemptions from every policy rule (NE and SUS).

Pure data and matching; the checks that use it live in `rules/suspend_policy.py`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from jobguard.validators.context import Requester
from jobguard.validators.globs import glob_regex, globs_intersect, is_glob
from jobguard.validators.selectors import selector_matches

SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:"


@dataclass(frozen=True, slots=True)
class Subjects:
    """Users, groups and service accounts ("namespace:name")."""

    users: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()
    service_accounts: tuple[str, ...] = ()

    def includes(self, requester: Requester) -> bool:
        if requester.username in self.users:
            return True
        if any(group in self.groups for group in requester.groups):
            return True
        return any(
            requester.username == SERVICE_ACCOUNT_PREFIX + sa for sa in self.service_accounts
        )

    def describe(self) -> str:
        """Who these subjects are, for messages ("kueue-system:kueue-controller-manager")."""
        names = [*self.service_accounts, *self.users, *(f"group {g}" for g in self.groups)]
        if not names:
            return "the policy's controllers (none are configured)"
        return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


BUILT_IN_EXEMPTIONS = Subjects(
    # kube-controller-manager's controllers that write Jobs, each under its own service account
    # (--use-service-account-credentials, kubeadm's default), and their shared identity
    # otherwise: creating a CronJob's Jobs, writing Job status, orphaning and adopting.
    users=("system:kube-controller-manager",),
    service_accounts=(
        "kube-system:job-controller",
        "kube-system:cronjob-controller",
        "kube-system:generic-garbage-collector",
    ),
    # Cluster administrators: the API server's superuser group and kubeadm's admin.conf group.
    groups=("system:masters", "kubeadm:cluster-admins"),
)
"""Requesters no policy rule ever denies unless the configuration turns them off
(`exemptions.builtIn: false`): blocking them breaks Jobs cluster-wide or locks admins out."""


def namespace_globs(patterns: tuple[str, ...] | None) -> re.Pattern[str] | None:
    """The globs as one compiled pattern (`globs.glob_regex` of each: the grammar the
    registrations and the VAP export share), compiled when the settings are made (a reload, in
    its worker thread): compiled one by one on the first request that meets them, on the event
    loop, 15,000 globs took 8 s, and each request tried them one by one."""
    if not patterns:
        return None
    return re.compile(
        "(?s)" + "|".join(f"(?:{glob_regex(p).removeprefix('(?s)')})" for p in patterns)
    )


@dataclass(frozen=True, slots=True)
class Exemptions:
    """Requests that no policy rule (NE, SUS) judges."""

    namespaces: tuple[str, ...] = ()
    """Globs on the request namespace."""
    subjects: Subjects = field(default_factory=Subjects)
    """The configured users, groups and service accounts."""
    built_in: Subjects = field(default_factory=Subjects)
    """`BUILT_IN_EXEMPTIONS` when the configuration keeps them (empty in a bare library value)."""
    _globs: re.Pattern[str] | None = field(init=False, default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_globs", namespace_globs(self.namespaces))

    def namespace_exempt(self, namespace: str) -> bool:
        return self._globs is not None and self._globs.fullmatch(namespace) is not None

    def exempt(self, namespace: str, requester: Requester) -> bool:
        if self.namespace_exempt(namespace):
            return True
        return self.subjects.includes(requester) or self.built_in.includes(requester)

    def exempt_beyond_controllers(self, namespace: str, requester: Requester) -> bool:
        """Exempt for a reason other than being a built-in controller: an exempt namespace, a
        configured subject or a built-in administrators' group. A policy's forced suspension
        (SUS-008) holds against the built-in controllers, which act for others (the
        cronjob-controller for a CronJob's author)."""
        if self.namespace_exempt(namespace) or self.subjects.includes(requester):
            return True
        return any(group in self.built_in.groups for group in requester.groups)


@dataclass(frozen=True, slots=True)
class SuspendPolicy:
    name: str
    namespaces: tuple[str, ...] | None = None
    """Globs on the namespace; None matches every namespace."""
    label_selector: Mapping[str, Any] | None = None
    """A Kubernetes LabelSelector on the Job's labels; None matches every Job."""
    force_suspend_on_create: bool = False
    controllers: Subjects = field(default_factory=Subjects)
    users_may_suspend: bool = True
    _globs: re.Pattern[str] | None = field(init=False, default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_globs", namespace_globs(self.namespaces))

    def matches(self, namespace: str, labels: Mapping[str, str]) -> bool:
        """`labels` as `present_labels` gives them (a label with an empty value is absent)."""
        if self.namespaces is not None and (
            self._globs is None or self._globs.fullmatch(namespace) is None
        ):
            return False
        return self.label_selector is None or selector_matches(self.label_selector, labels)

    def object_selector(self) -> dict[str, Any] | None:
        """The selector as an `objectSelector` that selects at least every Job the policy
        matches: the API server reads an empty-valued label as present, so `DoesNotExist` (which
        a policy reads as "absent or empty") is left out; every other requirement selects the
        same Jobs or more (`Exists` also selects an empty value), and the exact decision is a
        match condition's. None when nothing is left."""
        if self.label_selector is None:
            return None
        selector: dict[str, Any] = {}
        if self.label_selector.get("matchLabels"):
            selector["matchLabels"] = dict(self.label_selector["matchLabels"])
        requirements = [
            dict(r)
            for r in self.label_selector.get("matchExpressions") or []
            if r.get("operator") != "DoesNotExist"
        ]
        if requirements:
            selector["matchExpressions"] = requirements
        return selector or None

    def selected_keys(self) -> tuple[str, ...]:
        """Label keys the selector reads: changing their values re-routes a queued Job."""
        if self.label_selector is None:
            return ()
        keys = list((self.label_selector.get("matchLabels") or {}).keys())
        keys += [r.get("key", "") for r in self.label_selector.get("matchExpressions") or []]
        return tuple(dict.fromkeys(keys))


def present_labels(labels: Mapping[str, str]) -> dict[str, str]:
    """The labels policies match on: a label with an empty value counts as absent, as Kueue reads
    `kueue.x-k8s.io/queue-name: ""` (no queue name: not queued, never suspended by Kueue)."""
    return {key: value for key, value in labels.items() if value}


@dataclass(frozen=True, slots=True)
class PolicySet:
    exemptions: Exemptions = field(default_factory=Exemptions)
    policies: tuple[SuspendPolicy, ...] = ()

    def policy_for(self, namespace: str, labels: Mapping[str, str]) -> SuspendPolicy | None:
        """The first policy whose match fits, or None."""
        return next((p for p in self.policies if p.matches(namespace, labels)), None)


def _label_domains(
    selector: Mapping[str, Any] | None,
) -> dict[str, tuple[bool, bool, frozenset[str]]]:
    """Per label key, the values a selector allows: (absent allowed, finite, values), the values
    being the allowed ones when finite, else the excluded ones (empty values read as absent)."""
    out: dict[str, tuple[bool, bool, frozenset[str]]] = {}
    if selector is None:
        return out
    requirements = [
        (key, "In", [value]) for key, value in (selector.get("matchLabels") or {}).items()
    ]
    requirements += [
        (r.get("key", ""), r.get("operator", ""), r.get("values") or [])
        for r in selector.get("matchExpressions") or []
    ]
    for key, operator, values in requirements:
        domain = {
            "In": (False, True, frozenset(values)),
            "NotIn": (True, False, frozenset(values)),
            "Exists": (False, False, frozenset()),
            "DoesNotExist": (True, True, frozenset()),
        }.get(operator, (False, True, frozenset()))
        out[key] = _meet(out[key], domain) if key in out else domain
    return out


def _meet(
    a: tuple[bool, bool, frozenset[str]], b: tuple[bool, bool, frozenset[str]]
) -> tuple[bool, bool, frozenset[str]]:
    absent = a[0] and b[0]
    if a[1] and b[1]:
        return absent, True, a[2] & b[2]
    if a[1]:
        return absent, True, a[2] - b[2]
    if b[1]:
        return absent, True, b[2] - a[2]
    return absent, False, a[2] | b[2]


_Namespaces = tuple[frozenset[str], tuple[str, ...]] | None
"""A policy's namespaces as exact names and globs (None: every namespace)."""


def _namespaces(policy: SuspendPolicy) -> _Namespaces:
    if policy.namespaces is None:
        return None
    globs = tuple(p for p in policy.namespaces if is_glob(p))
    return frozenset(p for p in policy.namespaces if not is_glob(p)), globs


def _namespaces_meet(first: _Namespaces, second: _Namespaces) -> bool:
    """Some namespace is in both: exact names by set (a configuration can list thousands, and
    comparing every pair of a thousand policies' names took minutes), globs by automaton."""
    if first is None or second is None:
        return True
    (names_a, globs_a), (names_b, globs_b) = first, second
    return (
        not names_a.isdisjoint(names_b)
        or any(globs_intersect(n, g) for n in names_a for g in globs_b)
        or any(globs_intersect(n, g) for n in names_b for g in globs_a)
        or any(globs_intersect(a, b) for a in globs_a for b in globs_b)
    )


def _overlap(
    first: SuspendPolicy, second: SuspendPolicy, first_ns: _Namespaces, second_ns: _Namespaces
) -> bool:
    """Some Job can match both policies: their namespaces (`first_ns`, `second_ns`) intersect
    and no label key's requirements contradict each other."""
    if not _namespaces_meet(first_ns, second_ns):
        return False
    domains = _label_domains(first.label_selector)
    for key, domain in _label_domains(second.label_selector).items():
        met = _meet(domains[key], domain) if key in domains else domain
        absent, finite, values = met
        if not absent and finite and not values:
            return False
    return True


def shadowing(policies: PolicySet) -> list[str]:
    """Each pair of policies that can match the same Jobs, said with its consequence: the first
    whose match fits applies, so the later one never applies to those Jobs."""
    out = []
    listed = policies.policies
    namespaces = [_namespaces(p) for p in listed]
    for index, later in enumerate(listed):
        for earlier_index, earlier in enumerate(listed[:index]):
            if not _overlap(earlier, later, namespaces[earlier_index], namespaces[index]):
                continue
            text = (
                f"suspend policies {earlier.name!r} and {later.name!r} can match the same Jobs: "
                f"the first whose match fits applies, so {later.name!r} never applies to them"
            )
            consequences = []
            if later.force_suspend_on_create and not earlier.force_suspend_on_create:
                consequences.append(
                    f"they are not suspended on CREATE ({later.name!r} forces it, "
                    f"{earlier.name!r} does not: the cronjob-controller's Jobs start at once)"
                )
            if later.controllers != earlier.controllers:
                consequences.append(
                    f"{earlier.controllers.describe()} (not {later.controllers.describe()}) "
                    "resume and re-place them"
                )
            if later.users_may_suspend != earlier.users_may_suspend:
                may = "may" if earlier.users_may_suspend else "may not"
                consequences.append(f"users {may} suspend them")
            if consequences:
                text += ": " + "; ".join(consequences)
            out.append(text + ". List the narrower policy first, or make their matches disjoint")
    return out
