"""`jobguard` run in-process by the command-line tests: `run()` for its exit code and output,
`write_manifests()` for the files `jobguard check` reads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from jobguard.app.cli.main import main


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """`jobguard ARGS`: its exit code, and what it alone printed to stdout and stderr."""
    capsys.readouterr()  # what was printed before belongs to earlier calls
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def write_manifests(path: Path, *docs: dict[str, Any]) -> Path:
    """`docs` as one YAML file of several documents at `path`."""
    path.write_text(yaml.safe_dump_all(docs))
    return path
