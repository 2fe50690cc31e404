"""POD-023: DNS policy and config, host aliases, hostname and subdomain (upstream's
TestValidatePodDNSConfig, TestValidateHostAliases, TestValidateDNSPolicy cases)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.pod_cases import S, job, pod_causes

INV, REQ, NS = "FieldValueInvalid", "FieldValueRequired", "FieldValueNotSupported"
IP = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"
DC = f"{S}.dnsConfig"

VALID: list[tuple[str, dict[str, Any]]] = [
    (
        "None with a nameserver",
        job(
            dnsPolicy="None",
            dnsConfig={
                "nameservers": ["1.1.1.1"],
                "searches": ["ns.svc.cluster.local.", "_srv.example.com", "."],
                "options": [{"name": "ndots", "value": "2"}],
            },
        ),
    ),
    ("ClusterFirst with extra config", job(dnsConfig={"nameservers": ["2001:db8::1"]})),
    ("host aliases", job(hostAliases=[{"ip": "10.0.0.1", "hostnames": ["db.local"]}])),
    ("hostname and subdomain", job(hostname="worker-0", subdomain="workers")),
]


@pytest.mark.parametrize(("name", "obj"), VALID, ids=[name for name, _ in VALID])
def test_valid_dns_passes(name: str, obj: dict[str, Any]) -> None:
    assert pod_causes(obj) == []


INVALID: list[tuple[str, dict[str, Any], list[tuple[str, str, str, str]]]] = [
    (
        "None without dnsConfig",
        job(dnsPolicy="None"),
        [("POD-023", DC, REQ, "Required value: must provide `dnsConfig` when `dnsPolicy` is None")],
    ),
    (
        "None without nameservers",
        job(dnsPolicy="None", dnsConfig={}),
        [
            (
                "POD-023",
                f"{DC}.nameservers",
                REQ,
                "Required value: must provide at least one DNS nameserver when `dnsPolicy` is None",
            )
        ],
    ),
    (
        "unknown policy",
        job(dnsPolicy="Cluster"),
        [
            (
                "POD-023",
                f"{S}.dnsPolicy",
                NS,
                'Unsupported value: "Cluster": supported values: "ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"',
            )
        ],
    ),
    (
        "four nameservers",
        job(dnsConfig={"nameservers": ["1.1.1.1", "1.1.1.2", "1.1.1.3", "1.1.1.4"]}),
        [
            (
                "POD-023",
                f"{DC}.nameservers",
                INV,
                'Invalid value: ["1.1.1.1","1.1.1.2","1.1.1.3","1.1.1.4"]: must not have more than 3 nameservers',
            )
        ],
    ),
    (
        "bad nameserver",
        job(dnsConfig={"nameservers": ["dns.google"]}),
        [("POD-023", f"{DC}.nameservers[0]", INV, f'Invalid value: "dns.google": {IP}')],
    ),
    (
        "bad search",
        job(dnsConfig={"searches": ["Example.com"]}),
        [
            (
                "POD-023",
                f"{DC}.searches[0]",
                INV,
                "Invalid value: \"Example.com\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '_', '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '_?[a-z0-9]([-_a-z0-9]*[a-z0-9])?(\\._?[a-z0-9]([-_a-z0-9]*[a-z0-9])?)*')",
            )
        ],
    ),
    (
        "empty option",
        job(dnsConfig={"options": [{"value": "1"}]}),
        [("POD-023", f"{DC}.options[0]", REQ, "Required value: must not be empty")],
    ),
    (
        "host alias IP",
        job(hostAliases=[{"ip": "", "hostnames": ["a"]}]),
        [("POD-023", f"{S}.hostAliases[0].ip", INV, f'Invalid value: "": {IP}')],
    ),
    (
        "hostname",
        job(hostname="Worker"),
        [
            (
                "POD-023",
                f"{S}.hostname",
                INV,
                "Invalid value: \"Worker\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
            )
        ],
    ),
]


@pytest.mark.parametrize(("name", "obj", "expected"), INVALID, ids=[name for name, *_ in INVALID])
def test_invalid_dns_is_reported_as_upstream_does(
    name: str, obj: dict[str, Any], expected: list[tuple[str, str, str, str]]
) -> None:
    assert pod_causes(obj) == expected


def test_strict_ip_validation_from_1_36() -> None:
    obj = job(dnsConfig={"nameservers": ["010.0.0.1"]})
    for version in ("1.33", "1.34", "1.35"):
        assert pod_causes(obj, version) == []
    assert pod_causes(obj, "1.36") == [
        (
            "POD-023",
            f"{DC}.nameservers[0]",
            INV,
            'Invalid value: "010.0.0.1": must not have leading 0s',
        )
    ]


@given(octets=st.lists(st.integers(0, 255), min_size=4, max_size=4))
def test_every_dotted_quad_is_a_nameserver(octets: list[int]) -> None:
    address = ".".join(map(str, octets))
    assert pod_causes(job(dnsConfig={"nameservers": [address]}), "1.36") == []
