"""The Dockerfile cannot be built here (no Docker engine); check what can be checked: the files
it copies exist, its entrypoint and arguments are a valid `jobguard serve` command, the chart
passes arguments the entrypoint accepts, and the final stage stays minimal and non-root."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import helm_python as helm
import yaml

from jobguard.app.cli.main import build_parser

ROOT = Path(__file__).resolve().parents[1]
DOCKERFILE = (ROOT / "Dockerfile").read_text()


def _instructions() -> list[tuple[str, str]]:
    text = re.sub(r"\\\n", " ", DOCKERFILE)
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            keyword, _, rest = line.partition(" ")
            out.append((keyword.upper(), rest.strip()))
    return out


def _stages() -> list[list[tuple[str, str]]]:
    stages: list[list[tuple[str, str]]] = []
    for keyword, rest in _instructions():
        if keyword == "FROM":
            stages.append([])
        stages[-1].append((keyword, rest))
    return stages


def test_copied_files_exist() -> None:
    for keyword, rest in _instructions():
        if keyword == "COPY" and not rest.startswith("--from"):
            *sources, _destination = rest.split()
            for source in sources:
                assert (ROOT / source).exists(), source


def test_entrypoint_and_default_arguments_are_a_valid_serve_command() -> None:
    final = dict(_stages()[-1])
    entrypoint = json.loads(final["ENTRYPOINT"])
    cmd = json.loads(final["CMD"])
    # The entrypoint is the whole CLI (`docker run IMAGE check ...`); the default command serves.
    assert entrypoint == ["jobguard"]
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["jobguard"] == "jobguard.app.cli.main:main"
    args = build_parser().parse_args(entrypoint[1:] + cmd)
    assert args.command == "serve" and args.port == 8443 and args.tls_cert_file
    assert build_parser().parse_args(["check", "."]).command == "check"


def test_final_stage_is_slim_non_root_and_without_build_tools() -> None:
    final = _stages()[-1]
    assert final[0][1].startswith("python:") and "slim" in final[0][1]
    user = dict(final)["USER"]
    assert user.split(":")[0].isdigit() and user.split(":")[0] != "0"
    assert not any(k == "RUN" for k, _ in final)  # nothing installed
    assert any(k == "COPY" and rest.startswith("--from=build") for k, rest in final)


def test_runtime_dependencies_are_pinned() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pins = {
        line.split("==")[0].lower().replace("_", "-")
        for line in (ROOT / "constraints.txt").read_text().splitlines()
        if "==" in line
    }
    for requirement in project["dependencies"]:
        name = re.split(r"[<>=!~\[ ]", requirement, maxsplit=1)[0].lower().replace("_", "-")
        assert name in pins, requirement


def test_chart_arguments_are_accepted_by_the_entrypoint() -> None:
    chart = helm.Chart.load(str(ROOT / "charts" / "jobguard"))
    rendered = chart.render({"server": {"clientCASecret": "ca"}}, name="jobguard", namespace="ns")
    deployment = yaml.safe_load(rendered["jobguard/templates/deployment.yaml"])
    args = deployment["spec"]["template"]["spec"]["containers"][0]["args"]
    assert args[0] == "serve"  # the entrypoint is `jobguard`
    parsed = build_parser().parse_args(args)
    assert parsed.client_ca_file == "/etc/jobguard/client-ca/ca.crt"
    assert parsed.config == "/etc/jobguard/config/config.yaml"


def test_the_image_installs_the_pinned_package_and_checks_it() -> None:
    build = " ".join(rest for keyword, rest in _stages()[0] if keyword == "RUN")
    assert "pip install --no-cache-dir -c constraints.txt ." in build
    assert "/opt/jobguard/bin/jobguard --version" in build  # the stage fails on a broken install
