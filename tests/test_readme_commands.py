"""Every `jobguard` command the README's shell blocks show (the image's `docker run IMAGE ARGS`
included) is one the CLI takes, and the files it names under examples/ or tests/ exist. The
example commands are run, with their exit codes, by tests/test_examples.py; the pinned CI
install path by the checks below and tests/test_image.py."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from jobguard.app.cli.main import build_parser

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
IMAGE = "ghcr.io/jobguard/jobguard"


def shown_commands() -> list[str]:
    """The argument strings of `jobguard ...` (and `docker run ... IMAGE:TAG ...`) in ```sh
    blocks: at a line's start or after a pipe or `&&`, continuation lines joined, comments
    dropped."""
    found = []
    for block in re.findall(r"```sh\n(.*?)```", README, re.S):
        for line in block.replace("\\\n", " ").splitlines():
            line = line.split(" # ", 1)[0]
            found += [m.strip() for m in re.findall(r"(?:^|\|\s*|&&\s*)jobguard\s([^|&]*)", line)]
            found += [m.strip() for m in re.findall(rf"{IMAGE}:\S+\s([^|&]*)", line)]
    return found


COMMANDS = shown_commands()


def test_the_readme_shows_the_commands_of_every_kind() -> None:
    assert {shlex.split(c)[0] for c in COMMANDS} >= {"check", "review", "test", "config", "certs"}
    assert any("--output github" in c for c in COMMANDS)


@pytest.mark.parametrize("command", COMMANDS)
def test_readme_command_is_one_the_cli_takes(command: str) -> None:
    args = shlex.split(command)
    redirected = [i for i, a in enumerate(args) if a.startswith(">")]
    args = args[: redirected[0]] if redirected else args  # `> ca.b64`: the shell's
    try:
        build_parser().parse_args(args)
    except SystemExit as exc:  # argparse refused it
        raise AssertionError(f"jobguard {command}: refused ({exc.code})") from None
    for arg in args:
        if arg.startswith(("examples/", "tests/")):
            assert (ROOT / arg).exists(), arg


def test_the_ci_install_pins_what_the_image_pins() -> None:
    assert "python3 -m pip install -c /tmp/jobguard/constraints.txt /tmp/jobguard" in README
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert "pip install --no-cache-dir -c constraints.txt ." in dockerfile


def test_the_pre_commit_hook_pins_constraints_versions() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "pin_hook.py"), "--check"], check=False
    )
    assert done.returncode == 0, "run `python scripts/pin_hook.py` (make docs)"
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    pins = dict(line.split("==", 1) for line in (ROOT / "constraints.txt").read_text().splitlines())
    canonical = {name.lower().replace("_", "-"): version for name, version in pins.items()}
    listed = hook["additional_dependencies"]
    assert {"fastapi", "pydantic", "orjson", "ryaml", "uvloop"} <= {
        p.split("==")[0] for p in listed
    }
    for pin in listed:
        name, version = pin.split(";")[0].split("==")
        assert canonical[name] == version, pin
