"""The pre-commit hook's pinned dependencies, from constraints.txt.

pre-commit installs a `language: python` hook with `pip install . ADDITIONAL_DEPENDENCIES`:
pyproject.toml's ranges alone would resolve to whatever is newest. The hook lists, as its
additional dependencies, every package jobguard runs with (its runtime requirements and theirs,
as installed here) pinned to constraints.txt's version, so the hook runs what the image and the
CI install path run.

    python scripts/pin_hook.py           # rewrite .pre-commit-hooks.yaml's list
    python scripts/pin_hook.py --check   # exit 1 when it differs
"""

from __future__ import annotations

import argparse
import re
import sys
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
HOOKS = ROOT / ".pre-commit-hooks.yaml"


def constraints() -> dict[str, str]:
    pins: dict[str, str] = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        name, sep, version = line.partition("==")
        if sep:
            pins[canonicalize_name(name.strip())] = version.strip()
    return pins


def runtime_pins() -> list[str]:
    """`name==version` for jobguard's runtime closure; a direct requirement's marker kept
    (uvloop is not for Windows)."""
    pins = constraints()
    found: set[str] = set()
    markers: dict[str, str] = {}  # a direct requirement's marker
    todo: list[str] = []
    for text in distribution("jobguard").requires or []:
        requirement = Requirement(text)
        if requirement.marker is not None and "extra" in str(requirement.marker):
            continue
        todo.append(requirement.name)
        if requirement.marker is not None:
            markers[canonicalize_name(requirement.name)] = str(requirement.marker)
    while todo:
        name = todo.pop()
        key = canonicalize_name(name)
        if key in found:
            continue
        found.add(key)
        try:
            requires = distribution(name).requires or []
        except PackageNotFoundError:  # for another platform only
            continue
        for text in requires:
            requirement = Requirement(text)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                todo.append(requirement.name)
    missing = sorted(set(found) - set(pins))
    if missing:
        raise SystemExit(f"not pinned in constraints.txt: {', '.join(missing)}")
    return [
        f"{name}=={pins[name]}" + (f"; {markers[name]}" if name in markers else "")
        for name in sorted(found)
    ]


def render(text: str, pins: list[str]) -> str:
    listed = "".join(f"    - {pin}\n" for pin in pins)
    block = f"  additional_dependencies:\n{listed}"
    pattern = re.compile(r"  additional_dependencies:\n(?:    - .*\n)*")
    return pattern.sub(block, text) if pattern.search(text) else text + block


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    current = HOOKS.read_text()
    wanted = render(current, runtime_pins())
    if args.check:
        return 0 if wanted == current else 1
    HOOKS.write_text(wanted)
    return 0


if __name__ == "__main__":
    sys.exit(main())
