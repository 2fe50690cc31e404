"""`jobguard.app.cluster.client`: the official kubernetes client against a stand-in API server on
127.0.0.1 over HTTPS (tests/apiserver.py): kubeconfig and context, in-cluster configuration
from token and CA files and environment variables, paged lists, an expired continue token,
401, 403, the server version and PolicyReports."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import orjson
import pytest

from jobguard.app.cluster import client as client_module
from jobguard.app.cluster.client import (
    CRONJOBS,
    JOBS,
    MAX_LIST_RESTARTS,
    MAX_MESSAGE_CHARS,
    POLICY_REPORTS,
    AccessDenied,
    Cluster,
    ClusterError,
    connect,
    detect_version,
    in_cluster,
)
from jobguard.validators import SUPPORTED_VERSIONS
from tests.apiserver import TOKEN, StandIn
from tests.builders import cronjob, job


@pytest.fixture
def stand_in(server: StandIn) -> StandIn:
    """The shared server with seven Jobs in team-0 and team-1 and one CronJob."""
    server.cluster.reset()
    for i in range(7):
        server.cluster.add("jobs", job(f"job-{i}", uid=f"uid-{i}", namespace=f"team-{i % 2}"))
    server.cluster.add("cronjobs", cronjob("nightly", namespace="team-0"))
    return server


@pytest.fixture
def cluster(stand_in: StandIn, tmp_path: Path) -> Iterator[Cluster]:
    connection = connect(str(stand_in.kubeconfig(tmp_path / "kubeconfig")))
    yield connection
    connection.close()


def names(items: list[dict]) -> list[str]:
    return [i["metadata"]["name"] for i in items]


def test_kubeconfig_connection_and_version(
    cluster: Cluster, stand_in: StandIn, tmp_path: Path
) -> None:
    assert cluster.source == f"kubeconfig {tmp_path / 'kubeconfig'}"
    assert cluster.host == stand_in.url
    version = cluster.version()
    assert (version.major, version.minor, version.git_version) == ("1", "35", "v1.35.1")


def test_lists_are_paged_and_items_come_without_type(cluster: Cluster, stand_in: StandIn) -> None:
    items = list(cluster.list_objects(JOBS, page_size=3))
    assert names(items) == [f"job-{i}" for i in (0, 2, 4, 6, 1, 3, 5)]
    assert all("apiVersion" not in i and "kind" not in i for i in items)
    pages = stand_in.cluster.lists("jobs")
    assert [p.query.get("limit") for p in pages] == ["3", "3", "3"]
    assert ["continue" in p.query for p in pages] == [False, True, True]
    assert [p.path for p in pages] == ["/apis/batch/v1/jobs"] * 3


def test_one_namespace(cluster: Cluster, stand_in: StandIn) -> None:
    items = list(cluster.list_objects(JOBS, "team-1", page_size=500))
    assert names(items) == ["job-1", "job-3", "job-5"]
    assert [r.path for r in stand_in.cluster.lists("jobs")] == [
        "/apis/batch/v1/namespaces/team-1/jobs"
    ]
    assert names(list(cluster.list_objects(CRONJOBS))) == ["nightly"]


def test_an_expired_continue_token_restarts_the_list(
    cluster: Cluster, stand_in: StandIn, caplog: pytest.LogCaptureFixture
) -> None:
    stand_in.cluster.expire_tokens = 1
    items = list(cluster.list_objects(JOBS, page_size=3))
    # Every object once, although the first page was listed twice.
    assert sorted(names(items)) == sorted(f"job-{i}" for i in range(7))
    pages = stand_in.cluster.lists("jobs")
    assert ["continue" in p.query for p in pages] == [False, True, False, True, True]
    assert "continue token expired (410 Gone); restarting the list" in caplog.text


def test_a_list_that_keeps_expiring_gives_up(cluster: Cluster, stand_in: StandIn) -> None:
    stand_in.cluster.expire_tokens = 100
    with pytest.raises(ClusterError, match=r"expired \(410 Gone\) 4 times"):
        list(cluster.list_objects(JOBS, page_size=3))
    assert len(stand_in.cluster.lists("jobs")) == 2 * (MAX_LIST_RESTARTS + 1)


def test_forbidden_names_the_verb_and_resource(cluster: Cluster, stand_in: StandIn) -> None:
    stand_in.cluster.forbid.add(("list", "cronjobs"))
    with pytest.raises(AccessDenied) as raised:
        list(cluster.list_objects(CRONJOBS))
    denied = raised.value
    assert (denied.verb, denied.resource, denied.namespace) == ("list", CRONJOBS, None)
    assert str(denied).startswith(
        "forbidden: the credentials may not list cronjobs.batch in all namespaces (RBAC needs "
        "verb 'list' on resource 'cronjobs' in API group 'batch', cluster-wide): "
        'cronjobs.batch is forbidden: User "system:serviceaccount:jobguard:jobguard" cannot list'
    )
    with pytest.raises(AccessDenied, match="in namespace 'team-0'"):
        list(cluster.list_objects(CRONJOBS, "team-0"))


def test_unauthorized(stand_in: StandIn, tmp_path: Path) -> None:
    connection = connect(str(stand_in.kubeconfig(tmp_path / "kc", token="stale")))
    with pytest.raises(ClusterError, match=r"^unauthorized: the cluster at https://127\.0\.0\.1:"):
        connection.version()


def test_context_selects_the_cluster(stand_in: StandIn, tmp_path: Path) -> None:
    kubeconfig = str(stand_in.kubeconfig(tmp_path / "kc"))
    elsewhere = connect(kubeconfig, context="nowhere")
    assert elsewhere.source.endswith(", context nowhere")
    with pytest.raises(ClusterError, match=r"^cannot reach the cluster at https://127\.0\.0\.1:9"):
        elsewhere.version()
    with pytest.raises(ClusterError, match="no usable cluster configuration"):
        connect(kubeconfig, context="missing")
    with pytest.raises(ClusterError, match="no usable cluster configuration"):
        connect(str(tmp_path / "absent"))


def _service_account(tmp_path: Path, stand_in: StandIn, token: str = TOKEN) -> tuple[Path, Path]:
    directory = tmp_path / "serviceaccount"
    directory.mkdir()
    (directory / "token").write_text(token)
    (directory / "ca.crt").write_bytes(stand_in.ca_file.read_bytes())
    return directory / "token", directory / "ca.crt"


def test_in_cluster_configuration(stand_in: StandIn, tmp_path: Path) -> None:
    token, ca = _service_account(tmp_path, stand_in)
    environ = {
        "KUBERNETES_SERVICE_HOST": "127.0.0.1",
        "KUBERNETES_SERVICE_PORT": str(stand_in.port),
    }
    assert in_cluster(environ, str(token))
    connection = connect(environ=environ, token_file=str(token), ca_file=str(ca))
    assert connection.source == "in-cluster service account"
    assert connection.host == stand_in.url  # https, from the environment
    assert names(list(connection.list_objects(CRONJOBS))) == ["nightly"]
    # A stale token is refused by the API server: 401.
    (tmp_path / "other").mkdir()
    stale, _ = _service_account(tmp_path / "other", stand_in, token="stale")
    other = connect(environ=environ, token_file=str(stale), ca_file=str(ca))
    with pytest.raises(ClusterError, match="unauthorized"):
        other.version()


def test_in_cluster_needs_the_environment_and_the_token(stand_in: StandIn, tmp_path: Path) -> None:
    token, _ = _service_account(tmp_path, stand_in)
    assert not in_cluster({}, str(token))
    assert not in_cluster({"KUBERNETES_SERVICE_HOST": "127.0.0.1"}, str(tmp_path / "none"))
    # With a kubeconfig given, the kubeconfig wins even inside a pod.
    environ = {"KUBERNETES_SERVICE_HOST": "10.0.0.1", "KUBERNETES_SERVICE_PORT": "443"}
    kubeconfig = str(stand_in.kubeconfig(tmp_path / "kc"))
    chosen = connect(kubeconfig, environ=environ, token_file=str(token))
    assert chosen.host == stand_in.url


@pytest.mark.parametrize(
    ("reported", "chosen", "warned"),
    [
        ({"major": "1", "minor": "35", "gitVersion": "v1.35.1"}, "1.35", False),
        ({"major": "1", "minor": "34+", "gitVersion": "v1.34.2-gke.1"}, "1.34", False),
        ({"major": "1", "minor": "30", "gitVersion": "v1.30.0"}, "1.33", True),
        ({"major": "1", "minor": "37", "gitVersion": "v1.37.2"}, "1.37", False),
        ({"major": "1", "minor": "38", "gitVersion": "v1.38.0"}, "1.37", True),
        ({"major": "2", "minor": "0", "gitVersion": "v2.0.0"}, "1.37", True),
        ({"major": "", "minor": "", "gitVersion": "v1.36.0"}, "1.36", False),
    ],
)
def test_detect_version(
    cluster: Cluster,
    stand_in: StandIn,
    caplog: pytest.LogCaptureFixture,
    reported: dict[str, str],
    chosen: str,
    warned: bool,
) -> None:
    stand_in.cluster.version = reported
    with caplog.at_level(logging.INFO, "jobguard.cluster"):
        assert detect_version(cluster) == chosen
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert bool(warnings) is warned
    if warned:
        assert len(warnings) == 1
        newer = chosen == SUPPORTED_VERSIONS[-1]
        expected = "the newest supported release" if newer else "the oldest supported release"
        assert expected in warnings[0].getMessage()
        assert f"semantics of {chosen}," in warnings[0].getMessage()


def test_detect_version_of_an_unreadable_version(cluster: Cluster, stand_in: StandIn) -> None:
    stand_in.cluster.version = {"major": "x", "minor": "y", "gitVersion": "dev"}
    with pytest.raises(
        ClusterError, match="kubernetesVersion: auto: cannot read a Kubernetes version"
    ):
        detect_version(cluster)


def test_policy_reports_created_then_patched(cluster: Cluster, stand_in: StandIn) -> None:
    assert cluster.serves(POLICY_REPORTS) is False
    stand_in.cluster.reports_installed = True
    assert cluster.serves(POLICY_REPORTS) is True
    report = {
        "apiVersion": "wgpolicyk8s.io/v1alpha2",
        "kind": "PolicyReport",
        "metadata": {"name": "jobguard", "namespace": "team-0"},
        "results": [{"policy": "SUS-001", "result": "fail"}],
    }
    assert cluster.apply_report(report) == "created"
    assert cluster.apply_report({**report, "results": []}) == "updated"
    assert stand_in.cluster.reports[("team-0", "jobguard")]["results"] == []
    methods = [
        (r.method, r.content_type if r.method == "PATCH" else "")
        for r in stand_in.cluster.requests
        if "policyreports" in r.path
    ]
    assert methods == [("POST", ""), ("POST", ""), ("PATCH", "application/merge-patch+json")]
    stand_in.cluster.forbid.add(("create", "policyreports"))
    with pytest.raises(
        AccessDenied, match=r"may not create policyreports\.wgpolicyk8s\.io in namespace 'team-0'"
    ):
        cluster.apply_report(report)


def test_a_huge_error_message_is_cut(cluster: Cluster, stand_in: StandIn) -> None:
    """A 5 MiB message in the API server's Status is repeated to its first 1,000 characters."""
    stand_in.cluster.forbid.add(("list", "cronjobs"))
    stand_in.cluster.forbidden_padding = 5 * 1024 * 1024
    with pytest.raises(AccessDenied) as raised:
        list(cluster.list_objects(CRONJOBS))
    message = str(raised.value)
    detail = message[message.index("cronjobs.batch is forbidden") :]
    assert detail.startswith('cronjobs.batch is forbidden: User "system:serviceaccount:')
    more = int(re.search(r"\.\.\. \((\d+) more characters\)$", detail).group(1))  # type: ignore[union-attr]
    assert len(detail) - len(f"... ({more} more characters)") == MAX_MESSAGE_CHARS
    assert MAX_MESSAGE_CHARS + more > 5 * 1024 * 1024


def test_pages_are_sized_by_bytes_as_well_as_count(
    cluster: Cluster, stand_in: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Seven Jobs of about 100 KiB each, pages of at most 256 KiB: asked 4, then 2 at a time."""
    monkeypatch.setattr(client_module, "PAGE_BYTES", 256 * 1024)
    stand_in.cluster.reset()
    for i in range(7):
        big = job(f"job-{i}", uid=f"uid-{i}", namespace="team-0")
        big["metadata"]["annotations"] = {"note": "x" * 100_000}
        stand_in.cluster.add("jobs", big)
    items = list(cluster.list_objects(JOBS, page_size=4))
    assert sorted(names(items)) == [f"job-{i}" for i in range(7)]
    limits = [p.query.get("limit") for p in stand_in.cluster.lists("jobs")]
    assert limits[:2] == ["4", "2"] and set(limits[2:]) == {"2"}


def test_one_large_object_is_read_alone_and_the_page_grows_back(
    cluster: Cluster, stand_in: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Job larger than a page is listed alone (up to MAX_ANSWER_BYTES); after it, pages of
    small Jobs grow back to the page size asked."""
    monkeypatch.setattr(client_module, "PAGE_BYTES", 256 * 1024)
    stand_in.cluster.reset()
    big = job("job-0", uid="uid-0", namespace="team-0")
    big["metadata"]["annotations"] = {"note": "x" * 300_000}
    stand_in.cluster.add("jobs", big)
    for i in range(1, 7):
        stand_in.cluster.add("jobs", job(f"job-{i}", uid=f"uid-{i}", namespace="team-0"))
    items = list(cluster.list_objects(JOBS, page_size=4))
    assert names(items) == [f"job-{i}" for i in range(7)]
    limits = [p.query.get("limit") for p in stand_in.cluster.lists("jobs")]
    assert limits == ["4", "2", "1", "1", "2", "4"]


def test_an_object_over_the_answer_limit_is_an_error_naming_it(
    cluster: Cluster, stand_in: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(client_module, "PAGE_BYTES", 64 * 1024)
    monkeypatch.setattr(client_module, "MAX_ANSWER_BYTES", 256 * 1024)
    big = job("job-big", uid="uid-big", namespace="team-0")
    big["metadata"]["annotations"] = {"note": "x" * 300_000}
    stand_in.cluster.add("jobs", big)
    with pytest.raises(ClusterError, match=r"^list jobs.batch: the answer is over 262144 bytes$"):
        list(cluster.list_objects(JOBS, page_size=4))


def test_no_page_decoded_is_over_the_page_bytes(
    cluster: Cluster, stand_in: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Six Jobs whose env lists 8,000 `{"name": "E"}` (the most decoded memory per byte known),
    120 KB of JSON each, listed with pages of at most 256 KiB: an answer over it is dropped
    before it is decoded, so nothing larger is ever decoded at once (the memory this bounds is
    measured on the real control plane: bench/bench_audit.py)."""
    page_bytes = 256 * 1024
    monkeypatch.setattr(client_module, "PAGE_BYTES", page_bytes)
    decoded: list[int] = []

    def loads(data: bytes | bytearray) -> object:
        decoded.append(len(data))
        return orjson.loads(data)

    monkeypatch.setattr(
        client_module,
        "orjson",
        SimpleNamespace(loads=loads, JSONDecodeError=orjson.JSONDecodeError),
    )
    stand_in.cluster.reset()
    env = [{"name": "E"}] * 8_000
    for i in range(6):
        heavy = job(f"job-{i}", uid=f"uid-{i}", namespace="team-0")
        heavy["spec"]["template"]["spec"]["containers"][0]["env"] = env
        stand_in.cluster.add("jobs", heavy)
    listed = [item["metadata"]["name"] for item in cluster.list_objects(JOBS, page_size=100)]
    assert listed == [f"job-{i}" for i in range(6)]
    limits = [p.query.get("limit") for p in stand_in.cluster.lists("jobs")]
    assert limits == ["100", "50", "25", "12", "6", "3", *["1"] * 6]
    assert len(decoded) == 6 and all(100_000 < size <= page_bytes for size in decoded)


def test_endless_continue_tokens_end_the_list(
    cluster: Cluster, stand_in: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(client_module, "MAX_LIST_PAGES", 3)
    with pytest.raises(ClusterError, match=r"^list jobs.batch: more than 3 pages; stopped$"):
        list(cluster.list_objects(JOBS, page_size=1))
    assert len(stand_in.cluster.lists("jobs")) == 3
