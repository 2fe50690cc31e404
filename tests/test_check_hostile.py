"""`jobguard check` on hostile manifests (pull requests are untrusted input): an alias bomb
and a deeply nested document are refused naming file and line, quickly, in bounded memory."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest

from jobguard.app.cli.manifests import MAX_DEPTH, parse_all
from jobguard.app.config import ConfigError, parse_config
from jobguard.app.yaml_shape import allowed_alias_ratio, excessive_aliasing

ROOT = Path(__file__).resolve().parent.parent
MEMORY_LIMIT = 512 * 1024 * 1024


def alias_bomb() -> str:
    """9 levels of 9 aliases: 9**9 strings once expanded, in about 550 bytes."""
    lines = ["a: &a [" + ", ".join(['"x"'] * 9) + "]"]
    previous = "a"
    for name in "bcdefghi":
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{previous}"] * 9) + "]")
        previous = name
    return "\n".join(lines) + "\n"


def deep_document() -> str:
    """100 KB nested 50,000 deep."""
    return "a: " + "[" * 50_000 + "]" * 50_000 + "\n"


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def run_limited(*paths: Path) -> tuple[int, str, str, float]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "jobguard", "check", *map(str, paths)],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        preexec_fn=_limit_memory,
        check=False,
    )
    return done.returncode, done.stdout, done.stderr, time.monotonic() - start


def test_the_alias_bomb_is_refused_quickly_in_bounded_memory(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(alias_bomb())
    assert bomb.stat().st_size < 600
    code, out, err, elapsed = run_limited(bomb)
    assert code == 2, err
    assert err.startswith(f"jobguard: {bomb}:4: refused: document contains excessive aliasing (")
    assert f"{bomb}:4: error: refused: document contains excessive aliasing" in out
    assert elapsed < 10


@pytest.mark.parametrize(
    "text",
    [deep_document(), "- " * 50_000 + "x\n", "".join(" " * i + "k:\n" for i in range(300))],
    ids=["flow", "compact-sequences", "block"],
)
def test_deep_documents_are_refused_before_anything_recurses(tmp_path: Path, text: str) -> None:
    deep = tmp_path / "deep.yaml"
    deep.write_text(text)
    code, _out, err, elapsed = run_limited(deep)
    assert code == 2, err
    line = 1 if text.startswith(("a", "-")) else MAX_DEPTH + 1
    message = f"{deep}:{line}: refused: nested deeper than {MAX_DEPTH} levels of mappings and lists"
    assert err == f"jobguard: {message}\n"
    assert elapsed < 10


def test_the_other_documents_of_the_file_are_still_judged() -> None:
    job = "apiVersion: batch/v1\nkind: Job\nmetadata: {name: ok}\n"
    parsed = parse_all(f"{job}---\n{alias_bomb()}---\n{job}", "f.yaml")
    assert [m.data["metadata"]["name"] for m in parsed.manifests] == ["ok", "ok"]
    assert [(e.line, e.reason.split(" (")[0]) for e in parsed.errors] == [
        (8, "refused: document contains excessive aliasing")
    ]


def test_modest_aliasing_and_nesting_are_read() -> None:
    anchors = "x: &env [{name: A, value: b}]\n" + "".join(f"k{i}: *env\n" for i in range(200))
    nested = "a: " + "[" * (MAX_DEPTH - 2) + "]" * (MAX_DEPTH - 2) + "\n"
    for text in (anchors, nested):
        parsed = parse_all(text, "f.yaml")
        assert not parsed.errors and len(parsed.manifests) == 1


def test_go_yamls_alias_ratio() -> None:
    assert allowed_alias_ratio(1000) == 0.99
    assert allowed_alias_ratio(4_000_000) == 0.10
    assert allowed_alias_ratio(2_200_000) == pytest.approx(0.545)
    assert not excessive_aliasing(1000, 999)  # not more than 1000 values
    assert not excessive_aliasing(2000, 100)
    assert excessive_aliasing(2000, 1999)


def test_the_configuration_keeps_its_own_bounds() -> None:
    with pytest.raises(ConfigError) as raised:
        parse_config(alias_bomb())
    assert "more than 20000 values (aliases expanded)" in str(raised.value)
    with pytest.raises(ConfigError) as raised:
        parse_config("a: " + "[" * 150 + "]" * 150 + "\n")
    assert "nested deeper than 100 levels of mappings and lists" in str(raised.value)
