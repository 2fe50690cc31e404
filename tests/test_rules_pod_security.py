"""POD-018 (security contexts) and POD-019 (OS): upstream's TestValidateSecurityContext,
TestValidatePodSpec security cases, TestValidateOS cases."""

from __future__ import annotations

from typing import Any

import pytest

from tests.pod_cases import C0, S, job, pod_causes, with_container

INV, REQ, FORB, NS, DUP = (
    "FieldValueInvalid",
    "FieldValueRequired",
    "FieldValueForbidden",
    "FieldValueNotSupported",
    "FieldValueDuplicate",
)
RANGE = "must be between 0 and 2147483647, inclusive"
SYSCTL = (
    "must have at most 253 characters and match regex "
    r"^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$"
)

VALID: list[tuple[str, dict[str, Any]]] = [
    (
        "ids",
        job(
            securityContext={
                "runAsUser": 1000,
                "runAsGroup": 0,
                "fsGroup": 2000,
                "supplementalGroups": [1, 2],
            }
        ),
    ),
    (
        "sysctls",
        job(
            securityContext={
                "sysctls": [
                    {"name": "net.ipv4.ip_local_port_range", "value": "1 2"},
                    {"name": "kernel/shm_rmid_forced", "value": "1"},
                ]
            }
        ),
    ),
    (
        "seccomp localhost",
        job(
            securityContext={
                "seccompProfile": {"type": "Localhost", "localhostProfile": "profiles/a.json"}
            }
        ),
    ),
    ("apparmor", with_container(securityContext={"appArmorProfile": {"type": "RuntimeDefault"}})),
    (
        "restricted container",
        with_container(
            securityContext={
                "allowPrivilegeEscalation": False,
                "capabilities": {"drop": ["ALL"]},
                "runAsNonRoot": True,
                "seccompProfile": {"type": "RuntimeDefault"},
            }
        ),
    ),
    (
        "user namespace with Unmasked",
        job(
            hostUsers=False,
            containers=[{"name": "m", "image": "i", "securityContext": {"procMount": "Unmasked"}}],
        ),
    ),
    ("linux pod", job(os={"name": "linux"}, securityContext={"runAsUser": 1})),
    (
        "windows pod",
        job(
            os={"name": "windows"},
            securityContext={"windowsOptions": {"runAsUserName": "ContainerUser"}},
        ),
    ),
    ("seLinuxChangePolicy Recursive", job(securityContext={"seLinuxChangePolicy": "Recursive"})),
]


@pytest.mark.parametrize(("name", "obj"), VALID, ids=[name for name, _ in VALID])
def test_valid_security_contexts_pass(name: str, obj: dict[str, Any]) -> None:
    assert pod_causes(obj) == []


SC = f"{S}.securityContext"
INVALID: list[tuple[str, dict[str, Any], list[tuple[str, str, str, str]]]] = [
    (
        "pod runAsUser -1",
        job(securityContext={"runAsUser": -1}),
        [("POD-018", f"{SC}.runAsUser", INV, f"Invalid value: -1: {RANGE}")],
    ),
    (
        "fsGroup and supplementalGroups",
        job(securityContext={"fsGroup": 2147483648, "supplementalGroups": [1, -2]}),
        [
            ("POD-018", f"{SC}.fsGroup", INV, f"Invalid value: 2147483648: {RANGE}"),
            ("POD-018", f"{SC}.supplementalGroups[1]", INV, f"Invalid value: -2: {RANGE}"),
        ],
    ),
    (
        "container runAsGroup",
        with_container(securityContext={"runAsGroup": -5}),
        [("POD-018", f"{C0}.securityContext.runAsGroup", INV, f"Invalid value: -5: {RANGE}")],
    ),
    (
        "shareProcessNamespace with hostPID",
        job(shareProcessNamespace=True, hostPID=True),
        [
            (
                "POD-018",
                f"{SC}.shareProcessNamespace",
                INV,
                "Invalid value: true: ShareProcessNamespace and HostPID cannot both be enabled",
            )
        ],
    ),
    (
        "sysctl name, duplicate, hostNetwork",
        job(
            hostNetwork=True,
            securityContext={
                "sysctls": [
                    {"name": "Bad!"},
                    {"name": "net.core.somaxconn"},
                    {"name": "kernel.shm_rmid_forced"},
                    {"name": "kernel.shm_rmid_forced"},
                ]
            },
        ),
        [
            ("POD-018", f"{SC}.sysctls[0].name", INV, f'Invalid value: "Bad!": {SYSCTL}'),
            (
                "POD-018",
                f"{SC}.sysctls[1].name",
                INV,
                "Invalid value: \"net.core.somaxconn\": may not be specified when 'hostNetwork' is true",
            ),
            ("POD-018", f"{SC}.sysctls[3].name", DUP, 'Duplicate value: "kernel.shm_rmid_forced"'),
        ],
    ),
    (
        "fsGroupChangePolicy",
        job(securityContext={"fsGroupChangePolicy": "Sometimes"}),
        [
            (
                "POD-018",
                f"{SC}.fsGroupChangePolicy",
                NS,
                'Unsupported value: "Sometimes": supported values: "Always", "OnRootMismatch"',
            )
        ],
    ),
    (
        "seLinuxChangePolicy MountOption",
        job(securityContext={"seLinuxChangePolicy": "MountOption"}),
        [
            (
                "POD-018",
                f"{SC}.seLinuxChangePolicy",
                NS,
                'Unsupported value: "MountOption": supported values: "Recursive"',
            )
        ],
    ),
    (
        "seccomp Localhost without profile",
        job(securityContext={"seccompProfile": {"type": "Localhost"}}),
        [
            (
                "POD-018",
                f"{SC}.seccompProfile.localhostProfile",
                REQ,
                "Required value: must be set when seccomp type is Localhost",
            )
        ],
    ),
    (
        "seccomp without type",
        with_container(securityContext={"seccompProfile": {}}),
        [
            (
                "POD-018",
                f"{C0}.securityContext.seccompProfile.type",
                REQ,
                "Required value: type is required when seccompProfile is set",
            )
        ],
    ),
    (
        "apparmor padded",
        with_container(
            securityContext={"appArmorProfile": {"type": "Localhost", "localhostProfile": " p"}}
        ),
        [
            (
                "POD-018",
                f"{C0}.securityContext.appArmorProfile.localhostProfile",
                INV,
                'Invalid value: " p": must not be padded with whitespace',
            )
        ],
    ),
    (
        "procMount Unmasked with host users",
        with_container(securityContext={"procMount": "Unmasked"}),
        [
            (
                "POD-018",
                f"{C0}.securityContext.procMount",
                INV,
                'Invalid value: "Unmasked": `hostUsers` must be false to use `Unmasked`',
            )
        ],
    ),
    (
        "no escalation but privileged",
        with_container(securityContext={"allowPrivilegeEscalation": False, "privileged": True}),
        [
            (
                "POD-018",
                f"{C0}.securityContext",
                INV,
                'Invalid value: {"allowPrivilegeEscalation":false,"privileged":true}: cannot set `allowPrivilegeEscalation` to false and `privileged` to true',
            )
        ],
    ),
    (
        "hostUsers false with hostPID",
        job(hostUsers=False, hostPID=True),
        [("POD-018", f"{S}.HostPID", FORB, "Forbidden: when `hostUsers` is false")],
    ),
    (
        "os name",
        job(os={"name": "plan9"}),
        [
            (
                "POD-019",
                f"{S}.os",
                NS,
                'Unsupported value: "plan9": supported values: "linux", "windows"',
            )
        ],
    ),
    (
        "linux pod with windowsOptions",
        job(
            os={"name": "linux"},
            containers=[
                {
                    "name": "m",
                    "image": "i",
                    "securityContext": {"windowsOptions": {"runAsUserName": "u"}},
                }
            ],
        ),
        [
            (
                "POD-019",
                f"{C0}.securityContext.windowsOptions",
                FORB,
                "Forbidden: windows options cannot be set for a linux pod",
            )
        ],
    ),
    (
        "windows pod with runAsUser",
        job(os={"name": "windows"}, securityContext={"runAsUser": 1}),
        [("POD-019", f"{SC}.runAsUser", FORB, "Forbidden: cannot be set for a windows pod")],
    ),
]


@pytest.mark.parametrize(("name", "obj", "expected"), INVALID, ids=[name for name, *_ in INVALID])
def test_invalid_security_contexts_are_reported_as_upstream_does(
    name: str, obj: dict[str, Any], expected: list[tuple[str, str, str, str]]
) -> None:
    assert pod_causes(obj) == expected
