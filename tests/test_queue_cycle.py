"""The all-or-nothing cycle of a queue controller (Kueue), end to end through /mutate and
/validate with realistic userInfo, as the API server calls them, under the Kueue set-up of
tests/data/config/kueue.yaml, starting from the user's manifest tests/data/cases/sus/train.yaml."""

from __future__ import annotations

import base64
import copy
from collections.abc import Iterator
from typing import Any

import orjson
import pytest
from fastapi.testclient import TestClient

from jobguard.app.config import parse_config
from jobguard.app.server.app import create_app
from tests.builders import generated_labels
from tests.cases import read_object
from tests.corpus import KUEUE_SETUP
from tests.reviews import review

CONFIG = KUEUE_SETUP.read_text()
USER = "alice@example.com"
KUEUE = "system:serviceaccount:kueue-system:kueue-controller-manager"
JOB_CONTROLLER = "system:serviceaccount:kube-system:job-controller"
UID = "0b7c3f36-1a6b-4c53-9b43-2f3f4d1e0001"
T0, T1, T2 = "2026-03-01T10:00:00Z", "2026-03-01T10:05:00Z", "2026-03-01T10:20:00Z"


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    with TestClient(create_app(parse_config(CONFIG))) as c:
        yield c


def manifest() -> dict[str, Any]:
    """What the user applies: no suspend, a queue label."""
    return read_object("cases/sus/train.yaml")


def stored(obj: dict[str, Any]) -> dict[str, Any]:
    """The object after the API server's CREATE preparation (uid, labels, selector, defaults)."""
    out = copy.deepcopy(obj)
    out["metadata"]["uid"] = UID
    labels = generated_labels("train", UID)
    out["spec"]["template"].setdefault("metadata", {})["labels"] = labels
    out["spec"]["selector"] = {"matchLabels": {"batch.kubernetes.io/controller-uid": UID}}
    out["spec"].update(backoffLimit=6, podReplacementPolicy="TerminatingOrFailed")
    out["status"] = {}
    return out


def call(client: TestClient, path: str, body: dict[str, Any]) -> dict[str, Any]:
    r = client.post(path, json=body)
    assert r.status_code == 200
    response: dict[str, Any] = r.json()["response"]
    assert response["uid"] == body["request"]["uid"]
    return response


def validate(
    client: TestClient, new: Any, old: Any = None, user: str = USER, sub: str = ""
) -> dict[str, Any]:
    op = "CREATE" if old is None else "UPDATE"
    return call(client, "/validate", review(new, old, op, sub=sub, user=user))


def denied_by(response: dict[str, Any]) -> str:
    assert response["allowed"] is False
    status = response["status"]
    assert status["code"] == 403 and status["reason"] == "Forbidden"
    return str(status["message"])


def with_directives(job: dict[str, Any], zone: str) -> dict[str, Any]:
    out = copy.deepcopy(job)
    pod = out["spec"]["template"]["spec"]
    pod["nodeSelector"] = {"cloud.provider/zone": zone}
    pod["tolerations"] = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    return out


def replace_status(job: dict[str, Any], **status: Any) -> dict[str, Any]:
    """The Job with exactly this status (fields not given are cleared)."""
    out = copy.deepcopy(job)
    out["status"] = status
    return out


def test_all_or_nothing_cycle(client: TestClient) -> None:
    # 1. The user creates the Job; the mutating webhook suspends it.
    created = manifest()
    mutation = call(client, "/mutate", review(created, user=USER))
    assert mutation["allowed"] is True and mutation["patchType"] == "JSONPatch"
    assert orjson.loads(base64.b64decode(mutation["patch"])) == [
        {"op": "add", "path": "/spec/suspend", "value": True}
    ]
    created["spec"]["suspend"] = True
    job = stored(created)
    assert validate(client, job)["allowed"] is True
    # ... and cannot create it running by skipping the mutation.
    running = stored(manifest())
    running["spec"]["suspend"] = False
    assert "SUS-001" in denied_by(validate(client, running))

    # 2. Kueue admits it: injects nodeSelector and tolerations and resumes in one update.
    admitted = with_directives(job, "zone-a")
    admitted["spec"]["suspend"] = False
    message = denied_by(validate(client, admitted, job, USER))
    assert "SUS-002" in message and "SUS-004" in message
    assert (
        "only kueue-system:kueue-controller-manager may resume jobs matched by policy "
        "'queued'" in message
    )
    assert validate(client, admitted, job, KUEUE)["allowed"] is True

    # 3. The job controller starts pods and sets startTime.
    started = replace_status(admitted, startTime=T0, active=4, ready=0)
    assert validate(client, started, admitted, JOB_CONTROLLER, "status")["allowed"] is True

    # 4. Pods never all got ready: Kueue evicts by suspending; the user may not.
    evicted = copy.deepcopy(started)
    evicted["spec"]["suspend"] = True
    assert "SUS-003" in denied_by(validate(client, evicted, started, USER))
    assert validate(client, evicted, started, KUEUE)["allowed"] is True

    # 5. The job controller stops the pods and sets Suspended=True; Kueue clears startTime
    #    (upstream allows that only while the Job is suspended).
    stopped = replace_status(
        evicted,
        startTime=T0,
        active=0,
        conditions=[{"type": "Suspended", "status": "True", "reason": "JobSuspended"}],
    )
    assert validate(client, stopped, evicted, JOB_CONTROLLER, "status")["allowed"] is True
    cleared = replace_status(stopped, active=0, conditions=stopped["status"]["conditions"])
    assert validate(client, cleared, stopped, KUEUE, "status")["allowed"] is True

    # 6. Kueue re-places the Job elsewhere and resumes it; the user may not.
    readmitted = with_directives(cleared, "zone-b")
    readmitted["spec"]["suspend"] = False
    message = denied_by(validate(client, readmitted, cleared, USER))
    assert "SUS-002" in message and "SUS-004" in message
    assert validate(client, readmitted, cleared, KUEUE)["allowed"] is True

    # ... and the user cannot slip out of the queue while suspended.
    escaped = copy.deepcopy(cleared)
    del escaped["metadata"]["labels"]["kueue.x-k8s.io/queue-name"]
    assert "SUS-005" in denied_by(validate(client, escaped, cleared, USER))

    # 7. The job controller flips Suspended to False and sets a new startTime.
    resumed = replace_status(
        readmitted,
        startTime=T2,
        active=4,
        conditions=[{"type": "Suspended", "status": "False", "reason": "JobResumed"}],
    )
    assert validate(client, resumed, readmitted, JOB_CONTROLLER, "status")["allowed"] is True
    # Removing the Suspended condition instead of flipping it is refused (NE-002, on by default)
    # for status writers other than the built-in controllers, which are exempt by default.
    dropped = replace_status(readmitted, startTime=T2, active=4, conditions=[])
    response = validate(client, dropped, readmitted, KUEUE, "status")
    assert response["allowed"] is False
    assert response["status"]["details"]["causes"][0]["field"] == "status.conditions"
    assert validate(client, dropped, readmitted, JOB_CONTROLLER, "status")["allowed"] is True


def test_upstream_still_refuses_directive_changes_once_the_job_ran(client: TestClient) -> None:
    # A suspended Job that ran and still has startTime: on 1.35 even Kueue gets TM-001.
    job = stored(manifest())
    job["spec"]["suspend"] = True
    ran = replace_status(
        job, startTime=T1, active=0, conditions=[{"type": "Suspended", "status": "True"}]
    )
    moved = with_directives(ran, "zone-c")
    response = validate(client, moved, ran, KUEUE)
    assert response["allowed"] is False
    assert response["status"]["code"] == 422
    assert response["status"]["details"]["causes"] == [
        {
            "reason": "FieldValueInvalid",
            "field": "spec.template",
            "message": response["status"]["details"]["causes"][0]["message"],
        }
    ]
