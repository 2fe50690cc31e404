"""The real API server as the judge of jobguard's fidelity: every Job and CronJob manifest the
repository holds and a seeded stream of generated Jobs, as dry runs, against `jobguard check
--kubernetes-version <the server's release>` (tests/realapi/differential.py says how).

Disagreements fail the test unless tests/realapi/disagreements.yaml lists them with their reason;
an entry that no longer matches a disagreement on its release fails it too (the list stays
short and true). The figures per corpus source and rule area go to the terminal summary.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import httpx

from tests.realapi.differential import (
    RECORD,
    Run,
    check_settings,
    corpus,
    generated_items,
    judge_both,
    listed,
    server_version,
    update_items,
    volume_items,
)

WEBHOOKS = "/apis/admissionregistration.k8s.io/v1/{}webhookconfigurations"


def test_the_api_server_and_jobguard_agree_on_every_manifest(
    admin: httpx.Client, namespace: Callable[[str], str]
) -> None:
    # The API server's own verdicts: no webhook registered anywhere while this runs.
    for kind in ("validating", "mutating"):
        registered = admin.get(WEBHOOKS.format(kind)).json()["items"]
        assert not registered, f"{kind} webhooks registered: {registered}"
    git_version, choice = server_version(admin)
    settings = check_settings(choice.version)
    run = Run(git_version, choice.version)
    RECORD.append(run)
    started = time.monotonic()
    shared = namespace("diff")
    items = [*corpus(), *volume_items(), *generated_items(), *update_items()]
    stores: dict[str, str] = {}
    for item in items:
        # An UPDATE's stored object lives in a namespace of its own (names repeat across cases).
        run.outcomes.append(
            judge_both(admin, settings, item, namespace("diff") if item.old else shared, stores)
        )
    run.seconds = time.monotonic() - started

    known = listed()
    unlisted = []
    for outcome in run.outcomes:
        if outcome.agree:
            continue
        entry = next((e for e in known if e.covers(outcome, choice.cluster)), None)
        if entry is None:
            unlisted.append(outcome)
        else:
            run.listed.append((outcome, entry))
    matched = {id(entry) for _, entry in run.listed}
    stale = [
        entry
        for entry in known
        if (not entry.versions or choice.cluster in entry.versions) and id(entry) not in matched
    ]
    # Both judges saw both verdicts: neither side accepts (or refuses) everything.
    assert {o.server.allowed for o in run.outcomes} == {True, False}
    assert {o.guard.allowed for o in run.outcomes} == {True, False}
    assert not unlisted, f"{len(unlisted)} unlisted disagreement(s):\n" + "\n".join(
        o.describe() for o in unlisted
    )
    assert not stale, (
        "listed but no longer disagreeing on "
        + choice.cluster
        + ":\n"
        + "\n".join(f"{', '.join(e.ids)}: {e.reason}" for e in stale)
    )
