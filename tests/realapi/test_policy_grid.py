"""The policy grid against the real API server: for several configurations (a plain glob, a
bracket glob, every namespace), requesters (a user, the queue controller, an administrator, the
cronjob-controller) x namespaces (matched, not) x queue labels (set, empty, none) x operations
(create running, create suspended, resume, a relabel through `jobs/status`), sent as real
(dry-run) requests:

- with jobguard up, the API server refuses exactly what jobguard's own admission chain refuses
  (a request a SUS rule denies that no registration sends to jobguard is a break);
- with jobguard down (its registrations left in place), every request a SUS rule denies is still
  refused (the policy's registration fails closed), and every request the policy does not judge
  still goes through (nothing outside its scope waits on a fail-closed webhook).
"""

from __future__ import annotations

import copy
import json
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from jobguard.app.config import parse_config
from jobguard.validators import BOTH_STAGES, Operation, Request, Requester, admit
from tests.controlplane import CRONJOB_CONTROLLER, KUEUE_SA, ControlPlane, create_namespace
from tests.realapi.conftest import Registered
from tests.realapi.kube import (
    JOBS,
    QUEUE_LABEL,
    apply_merge_patch,
    identity,
    job_manifest,
)

MERGE = {"Content-Type": "application/merge-patch+json"}
REQUESTERS: dict[str, tuple[str, tuple[str, ...]]] = {
    "alice": ("alice", ()),
    "kueue": (KUEUE_SA, ("system:serviceaccounts", "system:serviceaccounts:kueue-system")),
    "admin": ("admin", ("system:masters",)),
    "cronjob-controller": (
        CRONJOB_CONTROLLER,
        ("system:serviceaccounts", "system:serviceaccounts:kube-system"),
    ),
}
LABELS: dict[str, str | None] = {"queued": "q", "empty": "", "unlabelled": None}
OPERATIONS = ("create-running", "create-suspended", "resume", "status-relabel")


def configuration(prefix: str, kind: str) -> tuple[dict[str, Any], str, str]:
    """(config, a matched namespace, an unmatched one) for one shape of `match.namespaces`."""
    matched, unmatched = f"{prefix}-team-a", f"{prefix}-batch"
    patterns = {
        "glob": [f"{prefix}-team-*"],
        "bracket": [f"{prefix}-team-[ab]*"],
        "all": ["*"],
        "rule-globs": [f"{prefix}-team-*"],
        "overlapping": [f"{prefix}-team-*"],
    }[kind]
    if kind == "all":
        unmatched = "kueue-system"  # exempt: the only namespace an all-namespace policy skips
    config: dict[str, Any] = {
        "kubernetesVersion": "auto",
        "exemptions": {"namespaces": ["kube-system", "kueue-system"]},
        "suspendPolicies": [
            {
                "name": "queued",
                "match": {
                    "namespaces": patterns,
                    "labelSelector": {
                        "matchExpressions": [{"key": QUEUE_LABEL, "operator": "Exists"}]
                    },
                },
                "forceSuspendOnCreate": True,
                "controllers": {"serviceAccounts": ["kueue-system:kueue-controller-manager"]},
            }
        ],
    }
    if kind == "rule-globs":
        # Globs that do not depend on their order: SUS-00[1-4] deny, SUS-005 only warns.
        config["rules"] = {
            "SUS-00[1-4]": {"enforcement": "deny"},
            "SUS-005": {"enforcement": "warn"},
        }
    if kind == "overlapping":
        # A narrower policy first, without forceSuspendOnCreate: it wins for team-a (first
        # match), so there creates are refused instead of suspended (config validate warns).
        narrow = yaml.safe_load(yaml.safe_dump(config["suspendPolicies"][0]))
        narrow.update(name="narrow", forceSuspendOnCreate=False)
        narrow["match"]["namespaces"] = [f"{prefix}-team-a*"]
        config["suspendPolicies"].insert(0, narrow)
    return config, matched, unmatched


@dataclass(frozen=True)
class Case:
    requester: str
    namespace: str
    label: str
    operation: str

    def __str__(self) -> str:
        return f"{self.requester} {self.operation} {self.label} in {self.namespace}"


def manifest(name: str, label: str, suspend: bool) -> dict[str, Any]:
    return job_manifest(name, queue=LABELS[label], suspend=suspend)


def send(plane: ControlPlane, case: Case, stored: dict[str, Any]) -> tuple[httpx.Response, Any]:
    """The request (a dry run) and what jobguard's chain is given for it: (new, old)."""
    username, groups = REQUESTERS[case.requester]
    jobs = JOBS.format(namespace=case.namespace)
    with identity(plane, username, list(groups)) as client:
        if case.operation.startswith("create"):
            body = manifest(
                f"c-{secrets.token_hex(3)}", case.label, case.operation.endswith("suspended")
            )
            return client.post(jobs, params={"dryRun": "All"}, json=body), (body, None)
        name = stored["metadata"]["name"]
        if case.operation == "resume":
            patch: dict[str, Any] = {"spec": {"suspend": False}}
            path = f"{jobs}/{name}"
        else:
            patch = {"metadata": {"labels": {QUEUE_LABEL: "other"}}}
            path = f"{jobs}/{name}/status"
        response = client.patch(
            path, params={"dryRun": "All"}, content=json.dumps(patch), headers=MERGE
        )
        return response, (apply_merge_patch(stored, patch), stored)


def judged_by_jobguard(
    config: dict[str, Any], release: str, case: Case, new: Any, old: Any
) -> bool:
    """Whether jobguard's admission chain (mutation first, as the API server runs them) denies."""
    settings = parse_config(yaml.safe_dump(config)).to_settings(release)
    username, groups = REQUESTERS[case.requester]
    request = Request(
        "Job",
        Operation.CREATE if old is None else Operation.UPDATE,
        copy.deepcopy(new),
        copy.deepcopy(old),
        subresource="status" if case.operation == "status-relabel" else "",
        namespace=case.namespace,
        requester=Requester(username, (*groups, "system:authenticated")),
    )
    verdict = admit(request, settings, BOTH_STAGES).verdict
    assert verdict is not None
    return not verdict.allowed


def in_scope(case: Case, matched: str) -> bool:
    """What the policy judges (README): its namespaces and label, neither its controllers nor
    exempt requesters, but the built-in controllers' creates."""
    if case.namespace != matched or case.label != "queued":
        return False
    if case.requester in ("kueue", "admin"):
        return False
    return case.requester == "alice" or case.operation.startswith("create")


@pytest.fixture
def grid_namespaces(admin: httpx.Client) -> Iterator[str]:
    yield f"g{secrets.token_hex(2)}"


@pytest.mark.parametrize("kind", ["glob", "bracket", "all", "rule-globs", "overlapping"])
def test_the_policy_grid_holds_with_jobguard_up_and_down(
    plane: ControlPlane,
    admin: httpx.Client,
    jobguard: Registered,
    grid_namespaces: str,
    kind: str,
    tmp_path: Path,
) -> None:
    config, matched, unmatched = configuration(grid_namespaces, kind)
    release = plane.release()
    for namespace in (matched, unmatched):
        create_namespace(admin, namespace)
    stored: dict[tuple[str, str], dict[str, Any]] = {}
    with plane.http("kueue") as queue:
        for namespace in (matched, unmatched):
            for label in LABELS:
                body = manifest(f"stored-{label}", label, suspend=True)
                made = queue.post(JOBS.format(namespace=namespace), json=body)
                assert made.status_code == 201, made.text
                stored[(namespace, label)] = made.json()
    cases = [
        Case(requester, namespace, label, operation)
        for requester in REQUESTERS
        for namespace in (matched, unmatched)
        for label in LABELS
        for operation in OPERATIONS
        if not (operation == "status-relabel" and label != "queued")
    ]
    jobguard.start(config, canary=matched)

    breaks: list[str] = []
    denied_when_up: list[str] = []
    for case in cases:
        response, (new, old) = send(plane, case, stored[(case.namespace, case.label)])
        denies = judged_by_jobguard(config, release, case, new, old)
        if denies:
            denied_when_up.append(str(case))
        if denies != (not response.is_success):
            breaks.append(f"up: {case}: jobguard denies={denies}, API {response.status_code}")

    jobguard.guard.stop()  # registrations stay: jobguard is down
    refused_when_down = 0
    for case in cases:
        response, (new, old) = send(plane, case, stored[(case.namespace, case.label)])
        denies = judged_by_jobguard(config, release, case, new, old)
        refused = not response.is_success
        refused_when_down += refused
        if denies and not refused:
            breaks.append(f"down: {case}: a SUS denial let through")
        if refused and not in_scope(case, matched):
            breaks.append(f"down: {case}: outside the policy, refused ({response.status_code})")
    print(
        f"policy grid {kind}: {len(cases)} requests, {len(denied_when_up)} denied with jobguard "
        f"up, {refused_when_down} refused with it down, {len(breaks)} breaks"
    )
    assert breaks == [], "\n".join(breaks)
    # Not vacuous: a user's resume and relabel out through /status are the SUS denials (her
    # unsuspended creates are suspended by /mutate), and more is refused while jobguard is down.
    expected = [f"alice resume queued in {matched}"]
    if kind == "overlapping":  # the narrow policy does not suspend: a running create is refused
        expected.insert(0, f"alice create-running queued in {matched}")
    if kind != "rule-globs":  # SUS-005 only warns there
        expected.append(f"alice status-relabel queued in {matched}")
    assert denied_when_up == expected
    assert refused_when_down > len(denied_when_up)
