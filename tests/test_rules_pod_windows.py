"""POD-018's Windows parts (upstream validateWindowsSecurityContextOptions and
validateWindowsHostProcessPod) and POD-009/POD-010 on the pod's `overhead` (validateOverhead),
with upstream's paths and messages (TestValidateWindowsSecurityContextOptions's cases)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.builders import create, detailed_causes, settings
from tests.pod_cases import S, job

INV = "FieldValueInvalid"
WO = f"{S}.securityContext.windowsOptions"


def windows(**options: Any) -> dict[str, Any]:
    return job(os={"name": "windows"}, securityContext={"windowsOptions": options})


def container(name: str, **options: Any) -> dict[str, Any]:
    return {"name": name, "image": "busybox", "securityContext": {"windowsOptions": options}}


def security(obj: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    verdict = create(obj, settings("1.37"))
    return [c for c in detailed_causes(verdict) if c[0] in ("POD-009", "POD-010", "POD-018")]


CASES: list[tuple[str, dict[str, Any], list[tuple[str, str, str, str]] | None]] = [
    ("valid user names", windows(runAsUserName="Container. User"), []),
    ("domain and user", windows(runAsUserName="NT AUTHORITY\\NETWORK SERVICE"), []),
    ("DNS domain", windows(runAsUserName="contoso.local\\user"), []),
    (
        "empty user name",
        windows(runAsUserName=""),
        [
            (
                "POD-018",
                f"{WO}.runAsUserName",
                INV,
                'Invalid value: "": runAsUserName cannot be an empty string',
            )
        ],
    ),
    (
        "control characters",
        windows(runAsUserName="a\x07b"),
        [
            (
                "POD-018",
                f"{WO}.runAsUserName",
                INV,
                'Invalid value: "a\\ab": runAsUserName cannot contain control characters',
            )
        ],
    ),
    (
        "two backslashes",
        windows(runAsUserName="a\\b\\c"),
        [
            (
                "POD-018",
                f"{WO}.runAsUserName",
                INV,
                'Invalid value: "a\\\\b\\\\c": runAsUserName cannot contain more than one backslash',
            )
        ],
    ),
    (
        "only dots and spaces, and a forbidden character",
        windows(runAsUserName="d\\. ."),
        [
            (
                "POD-018",
                f"{WO}.runAsUserName",
                INV,
                'Invalid value: "d\\\\. .": runAsUserName\'s User cannot contain only periods or spaces',
            )
        ],
    ),
    (
        "user too long",
        windows(runAsUserName="u" * 105),
        [
            (
                "POD-018",
                f"{WO}.runAsUserName",
                INV,
                f'Invalid value: "{"u" * 105}": runAsUserName\'s User length must not be longer than 104 characters',
            )
        ],
    ),
    (
        "a user with a forbidden character",
        windows(runAsUserName="a@b"),
        [
            (
                "POD-018",
                f"{WO}.runAsUserName",
                INV,
                'Invalid value: "a@b": runAsUserName\'s User cannot contain the following characters: "/\\:;|=,+*?<>@[]',
            )
        ],
    ),
    (
        "empty gMSA credential spec",
        windows(gmsaCredentialSpec=""),
        [
            (
                "POD-018",
                f"{WO}.gmsaCredentialSpec",
                INV,
                'Invalid value: "": gmsaCredentialSpec cannot be an empty string',
            )
        ],
    ),
    (
        "gMSA credential spec name not a subdomain",
        windows(gmsaCredentialSpecName="Bad_Name"),
        [
            (
                "POD-018",
                f"{WO}.gmsaCredentialSpecName",
                INV,
                'Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case '
                "alphanumeric characters, '-' or '.', and must start and end with an alphanumeric "
                "character (e.g. 'example.com', regex used for validation is "
                "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
            )
        ],
    ),
    ("hostProcess pod with hostNetwork", {**windows(hostProcess=True)}, None),
    (
        "hostProcess pod without hostNetwork",
        windows(hostProcess=True),
        [
            (
                "POD-018",
                f"{S}.hostNetwork",
                INV,
                "Invalid value: false: hostNetwork must be true if pod contains any hostProcess containers",
            )
        ],
    ),
    (
        "hostProcess containers mixed",
        job(
            os={"name": "windows"},
            hostNetwork=True,
            containers=[container("a", hostProcess=True), container("b", hostProcess=False)],
        ),
        [
            (
                "POD-018",
                S,
                INV,
                'Invalid value: "": If pod contains any hostProcess containers then all '
                "containers must be HostProcess containers",
            )
        ],
    ),
    (
        "hostProcess of the pod and a container differ",
        job(
            os={"name": "windows"},
            hostNetwork=True,
            securityContext={"windowsOptions": {"hostProcess": True}},
            containers=[container("a", hostProcess=False)],
        ),
        [
            (
                "POD-018",
                f"{S}.containers[0].securityContext.windowsOptions.hostProcess",
                INV,
                "Invalid value: false: pod hostProcess value must be identical if both are "
                "specified, was true",
            ),
        ],
    ),
    (
        "overhead",
        job(overhead={"cpu": "-1", "memory": "10Mi"}),
        [
            (
                "POD-009",
                f"{S}.overhead.limits[cpu]",
                INV,
                'Invalid value: "-1": must be greater than or equal to 0',
            )
        ],
    ),
    (
        "overhead of a non-container resource",
        job(overhead={"pods": "1"}),
        [
            (
                "POD-009",
                f"{S}.overhead.limits[pods]",
                INV,
                'Invalid value: "pods": must be a standard resource for containers',
            )
        ],
    ),
]


@pytest.mark.parametrize(("name", "obj", "expected"), CASES, ids=[c[0] for c in CASES])
def test_windows_options_host_process_and_overhead(
    name: str, obj: dict[str, Any], expected: list[tuple[str, str, str, str]] | None
) -> None:
    if expected is None:  # the same with hostNetwork: valid
        obj["spec"]["template"]["spec"]["hostNetwork"] = True
        expected = []
    assert security(obj) == expected
