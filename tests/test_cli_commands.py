"""`jobguard config validate|show`, help texts (every option's help and default, exit codes) and
`review` without input on a terminal."""

from __future__ import annotations

import argparse
import io
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml

from jobguard.app.cli.main import EXIT_CODES, build_parser, main
from jobguard.app.config import digest, load_config, parse_config
from tests.commands import run
from tests.corpus import KUEUE_SETUP


def test_config_validate_valid_files(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["config", "validate", str(KUEUE_SETUP)], capsys)
    assert (code, err) == (0, "")
    assert out == f"{KUEUE_SETUP}: valid ({digest(load_config(str(KUEUE_SETUP)).to_settings())})\n"


def test_config_validate_reports_every_problem_of_every_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("kubernetesVersion: 1.36\nrules:\n  XX-001: {enabled: true}\n")
    worse = tmp_path / "worse.yaml"
    worse.write_text("rules: [\n")
    code, out, err = run(["config", "validate", str(KUEUE_SETUP), str(bad), str(worse)], capsys)
    assert code == 2
    assert out.startswith(f"{KUEUE_SETUP}: valid (sha256:")
    lines = err.splitlines()
    assert [line.split(": ")[0] for line in lines] == [f"{bad}:1", f"{bad}:3", f"{worse}:2"]
    assert 'quote it, as in kubernetesVersion: "1.35"' in lines[0]
    assert "rules.XX-001: 'XX-001' matches no rule ID" in lines[1]
    assert "not valid YAML" in lines[2]


def test_config_show_prints_each_rule_with_enforcement_and_parameters(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "c.yaml"
    config.write_text(
        "enforcement: warn\nrules:\n  NE-007: {enabled: true, params: {users: [k]}}\n"
    )
    code, out, _ = run(["config", "show", "--config", str(config)], capsys)
    assert code == 0
    header, body = out.split("\n", 2)[:2], out.split("\n", 2)[2]
    assert header[0] == f"# jobguard 0.1.0: the effective configuration of {config}"
    settings = load_config(str(config)).to_settings()
    assert header[1].startswith(f"# digest {digest(settings)} ")
    shown = yaml.safe_load(body)
    assert shown["rules"]["NE-007"] == {
        "enabled": True,
        "enforcement": "warn",
        "params": {"users": ["k"]},
    }
    assert shown["rules"]["NE-004"] == {"enabled": False, "enforcement": "warn"}
    assert shown["rules"]["TM-001"] == {"enabled": True, "enforcement": "warn"}
    assert len(shown["rules"]) == len(settings.rules)
    assert shown["exemptions"]["builtIn"]["groups"] == ["system:masters", "kubeadm:cluster-admins"]
    code, out, _ = run(["config", "show", "--config", str(config), "--output", "json"], capsys)
    assert orjson.loads(out) == shown


def test_digest_follows_the_effective_rules_not_the_spelling() -> None:
    same = parse_config("rules:\n  NE-003: {enabled: true}\n").to_settings()
    spelt = parse_config("rules:\n  'NE-00[3]': {enabled: true}\n# a comment\n").to_settings()
    other = parse_config("rules:\n  NE-003: {enabled: true, enforcement: warn}\n").to_settings()
    assert digest(same) == digest(spelt) != digest(other)


def _commands(parser: argparse.ArgumentParser, prefix: str = "") -> list[tuple[str, Any]]:
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found += _commands(sub, f"{prefix} {name}".strip())
    return found or [(prefix, parser)]


COMMANDS = _commands(build_parser())


def test_every_command_is_listed_with_its_exit_codes() -> None:
    assert sorted(name for name, _ in COMMANDS) == sorted(EXIT_CODES)


@pytest.mark.parametrize(("name", "parser"), COMMANDS, ids=[n for n, _ in COMMANDS])
def test_every_option_has_help_and_shows_its_default(name: str, parser: Any) -> None:
    text = parser.format_help()
    assert EXIT_CODES[name] in " ".join(text.split())
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        assert action.help, (name, action.dest)
        if action.default not in (None, False) and action.option_strings:
            shown = f"(default: {action.default})"
            assert shown in " ".join(text.split()), (name, action.dest)


def test_top_level_help_names_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "exit codes" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["--version"])
    assert capsys.readouterr().out == "jobguard 0.1.0\n"


class _Terminal(io.BytesIO):
    def isatty(self) -> bool:
        return True


def test_review_without_a_file_on_a_terminal_prints_usage(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(_Terminal()))
    code, out, err = run(["review"], capsys)
    assert (code, out) == (2, "")
    assert err.startswith("usage: jobguard review")
    assert "give an AdmissionReview file, or - to read stdin" in err


def test_audit_page_size_default_is_one_definition() -> None:
    """`audit`, `serve` and the chart (which passes none unless asked) take one default."""
    from jobguard.app.cluster.paging import DEFAULT_PAGE_SIZE

    assert build_parser().parse_args(["audit"]).page_size == DEFAULT_PAGE_SIZE
    assert build_parser().parse_args(["serve"]).audit_page_size == DEFAULT_PAGE_SIZE


def test_serve_refuses_an_audit_page_size_under_one(capsys: pytest.CaptureFixture[str]) -> None:
    # 0 would ask the API server for the whole list at once (no `limit`).
    assert main(["serve", "--audit-interval", "60", "--audit-page-size", "0"]) == 2
    assert capsys.readouterr().err == "jobguard: --audit-page-size must be at least 1\n"


def test_check_loads_neither_the_kubernetes_client_nor_the_server(tmp_path: Path) -> None:
    """Start-up is part of every `jobguard check` in CI: it loads only what checking needs."""
    manifest = tmp_path / "job.yaml"
    manifest.write_text(
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: a}\nspec:\n  template:\n"
        "    spec:\n      restartPolicy: Never\n      containers: [{name: c, image: busybox}]\n"
    )
    script = (
        "import sys\n"
        "from jobguard.app.cli.main import main\n"
        f"code = main(['check', '--output', 'json', {str(manifest)!r}])\n"
        "heavy = ['kubernetes', 'fastapi', 'uvicorn', 'ssl', 'multiprocessing', 'xml.etree']\n"
        "print(code, sorted(m for m in heavy if m in sys.modules), file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.stderr.splitlines()[-1] == "0 []"


def test_check_in_process_leaves_the_collector_as_it_found_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import gc

    manifest = tmp_path / "job.yaml"
    manifest.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\n")
    assert gc.isenabled()
    assert main(["check", str(manifest)]) == 0
    capsys.readouterr()
    assert gc.isenabled() and gc.get_freeze_count() == 0


BAD_FILES: dict[str, bytes] = {
    "emptied": b"",
    "comment-only": b"# being rewritten\n",
    "nested-20000-deep": b"rules: " + b"[" * 20_000 + b"]" * 20_000 + b"\n",
    "oversized": b"# padding\n" * 110_000 + b"{}\n",
    "not-utf8": b"rules: \xff\n",
    "impossible-date": b"kubernetesVersion: 2026-13-01\n",
    "string-boolean": b"exemptions: {builtIn: 'no'}\n",
    "policy-without-match": b"suspendPolicies:\n- {name: p, controllers: {users: [k]}}\n",
    "policy-without-controllers": b"suspendPolicies:\n- {name: p, match: {namespaces: ['*']}}\n",
}


def test_config_validate_gives_one_line_for_each_bad_file_and_no_traceback(
    tmp_path: Path,
) -> None:
    paths = []
    for name, content in BAD_FILES.items():
        paths.append(tmp_path / f"{name}.yaml")
        paths[-1].write_bytes(content)
    proc = subprocess.run(
        [sys.executable, "-m", "jobguard", "config", "validate", *map(str, paths)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert (proc.returncode, proc.stdout) == (2, "")
    lines = proc.stderr.splitlines()
    assert len(lines) == len(paths), proc.stderr
    for path, line in zip(paths, lines, strict=True):
        assert line.startswith(f"{path}:"), line
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("name", ["nested-20000-deep", "oversized", "emptied"])
def test_serve_refuses_a_bad_file_as_a_config_error(name: str, tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_bytes(BAD_FILES[name])
    proc = subprocess.run(
        [sys.executable, "-m", "jobguard", "serve", "--config", str(path), "--port", "0"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "JOBGUARD_CONFIG": ""},
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"jobguard: {path}")
    assert len(proc.stderr.splitlines()) == 1, proc.stderr
