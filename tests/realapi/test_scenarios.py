"""The README's scenarios (examples/reviews/, Kueue set-up) as real requests by the right
identities, through the real API server with jobguard registered as a cluster install registers
it: each ends as the README's table says.

A review is replayed, not posted: its old object is created first (by the queue controller, which
may create Jobs running), then its change is sent as a merge patch by the review's requester (the
administrator impersonating built-in controllers). A status update is the real job controller's
own: the Job is created running and the controller writes its status.
"""

from __future__ import annotations

import copy
import json
import re
import secrets
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.controlplane import ControlPlane, create_namespace, wait_until
from tests.realapi.conftest import Registered
from tests.realapi.kube import (
    JOBS,
    get_job,
    identity,
    merge_patch,
    message,
)
from tests.test_examples import EXAMPLES, scenario_tables

KUEUE = EXAMPLES / "config" / "kueue.yaml"
STATED = scenario_tables()["examples/config/kueue.yaml"]
GENERATED_LABELS = (
    "controller-uid",
    "job-name",
    "batch.kubernetes.io/controller-uid",
    "batch.kubernetes.io/job-name",
)


def writable(obj: dict[str, Any], namespace: str) -> dict[str, Any]:
    """What a client sends: name, labels, annotations and spec (no uid, no status)."""
    metadata = {k: v for k, v in obj["metadata"].items() if k in ("name", "labels", "annotations")}
    spec = copy.deepcopy({k: v for k, v in obj["spec"].items() if k != "selector"})
    # The labels the API server generates from the Job's uid (a stored Job's) are its to write.
    labels = spec.get("template", {}).get("metadata", {}).get("labels", {})
    for key in GENERATED_LABELS:
        labels.pop(key, None)
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {**metadata, "namespace": namespace},
        "spec": spec,
    }


def replay(plane: ControlPlane, namespace: str, review: Path) -> str:
    """The README's words for what the real API server did with the review's request."""
    request = json.loads(review.read_text())["request"]
    user = request["userInfo"]
    new = writable(request["object"], namespace)
    jobs = JOBS.format(namespace=namespace)
    with identity(plane, user["username"], user.get("groups", [])) as requester:
        if request["operation"] == "CREATE":
            response = requester.post(jobs, json=new)
            stored_suspend = response.json().get("spec", {}).get("suspend")
            sent_suspend = new["spec"].get("suspend")
            if response.status_code != 201:
                return f"denied: {response.status_code} {message(response)}"
            return (
                "allowed, suspended by /mutate"
                if stored_suspend and not sent_suspend
                else "allowed"
            )
        old = writable(request["oldObject"], namespace)
        name = old["metadata"]["name"]
        with plane.http("kueue") as queue:
            created = queue.post(jobs, json=old)
            assert created.status_code == 201, created.text
        if request.get("subResource") == "status":
            # The real job controller writes the running Job's status (startTime, active).
            written = wait_until(
                lambda: get_job(requester, namespace, name).get("status", {}).get("active"),
                what="the job controller's status write",
            )
            return "allowed" if written == 1 else f"status {written}"
        patch = merge_patch(old, new)
        response = requester.patch(
            f"{jobs}/{name}",
            content=json.dumps(patch),
            headers={"Content-Type": "application/merge-patch+json"},
        )
        if response.status_code == 200:
            return "allowed"
        return f"denied: {response.status_code} {message(response)}"


@pytest.fixture(scope="module")
def kueue_setup(
    plane: ControlPlane, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Registered]:
    """One jobguard with the Kueue set-up for all the scenarios (each in its own namespace)."""
    registered = Registered(plane, tmp_path_factory.mktemp("scenarios"))
    canary_namespace = f"team-{secrets.token_hex(3)}"
    with plane.http() as admin:
        create_namespace(admin, canary_namespace)
    try:
        registered.start(
            yaml.safe_load(KUEUE.read_text()),
            canary=canary_namespace,
        )
        yield registered
    finally:
        registered.stop()


@pytest.mark.parametrize("review", sorted(STATED))
def test_scenario_ends_as_the_readme_states(
    plane: ControlPlane,
    kueue_setup: Registered,
    namespace: Callable[[str], str],
    review: str,
) -> None:
    ns = namespace("team")
    stated = STATED[review]
    seen = replay(plane, ns, EXAMPLES / "reviews" / review)
    if stated.startswith("denied"):
        rules = stated.removeprefix("denied (").removesuffix(")").split(", ")
        assert seen.startswith("denied: 403 "), seen
        # Whichever of jobguard's registrations the API server heard first: each judges every
        # rule it receives the request for.
        assert re.search(r'admission webhook "[a-z.-]*jobguard\.io" denied the request', seen)
        for rule in rules:
            assert f"{rule} " in seen, seen
    else:
        assert seen == stated
