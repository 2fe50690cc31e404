"""Suspend policies: who may create unsuspended, resume, suspend and re-place matched Jobs, and
the exemptions from every policy rule (NE and SUS).

Pure data and matching; the checks that use it live in `rules/suspend_policy.py`.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from jobguard.validators.context import Requester
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
    """The globs as one compiled pattern (`fnmatch.fnmatchcase` of any of them), compiled when
    the settings are made (a reload, in its worker thread): left to `fnmatchcase`, each glob is
    compiled on the first request that meets it, on the event loop (15,000 globs: 8 s), and each
    request tries them one by one."""
    if not patterns:
        return None
    return re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in patterns))


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
        return self._globs is not None and self._globs.match(namespace) is not None

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
            self._globs is None or self._globs.match(namespace) is None
        ):
            return False
        return self.label_selector is None or selector_matches(self.label_selector, labels)

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
