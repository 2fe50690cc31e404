"""The replayable cases of tests/data/cases.yaml: each file, what jobguard answers to it, the
`jobguard` command line that replays it, and what the admission chain makes of it."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from jobguard.app.admission.review import parse_review
from jobguard.app.cli.manifests import parse
from jobguard.app.config import load_config
from jobguard.validators import (
    BOTH_STAGES,
    Admission,
    Operation,
    Request,
    Requester,
    Settings,
    Stage,
    admit,
)
from tests.corpus import DATA

# What `jobguard check` assumes when the command line does not say (README: CI checks).
CHECK_USER = "jobguard-check"
CHECK_GROUPS = ("system:authenticated",)
KEYS = {"about", "file", "old", "subresource", "config", "allowed", "exit", "code", "violations"}

Finding = tuple[str, str, str]
"""(rule, field path, enforcement)."""


@dataclass(frozen=True, slots=True)
class Case:
    about: str
    file: str
    allowed: bool
    exit: int
    violations: tuple[Finding, ...]
    old: str | None = None
    subresource: str = ""
    config: str | None = None
    code: int | None = None

    @property
    def command(self) -> str:
        """`check` for a manifest (YAML), `review` for an AdmissionReview (JSON)."""
        return "review" if self.file.endswith(".json") else "check"

    def args(self, root: Path = DATA) -> list[str]:
        """The `jobguard` arguments that replay this case, with paths under `root`."""
        args = [self.command]
        if self.config is not None:
            args += ["--config", str(root / self.config)]
        if self.subresource:
            args += ["--subresource", self.subresource]
        if self.old is not None:
            args += ["--old", str(root / self.old)]
        return [*args, str(root / self.file)]

    @property
    def id(self) -> str:
        config = f"+{Path(self.config).stem}" if self.config else ""
        return f"{self.file.removeprefix('cases/')}{config}"


def _case(entry: dict[str, Any]) -> Case:
    unknown = set(entry) - KEYS
    if unknown:
        raise AssertionError(f"cases.yaml: unknown keys {sorted(unknown)} in {entry}")
    findings = tuple(
        (str(v[0]), str(v[1]), str(v[2]) if len(v) > 2 else "deny") for v in entry["violations"]
    )
    fields = {k: v for k, v in entry.items() if k != "violations"}
    case = Case(violations=findings, **fields)
    for path in (case.file, case.old, case.config):
        if path is not None and not (DATA / path).is_file():
            raise AssertionError(f"cases.yaml: {path} does not exist under {DATA}")
    return case


def load_cases() -> list[Case]:
    """Every case of tests/data/cases.yaml, in order."""
    entries = yaml.safe_load((DATA / "cases.yaml").read_text())
    if not entries:
        raise AssertionError(f"{DATA / 'cases.yaml'} holds no cases")
    return [_case(entry) for entry in entries]


def read_object(path: str) -> dict[str, Any]:
    """The object in a file under tests/data, read as `jobguard check` reads it: the one
    document of a manifest, or the `request.object` of an AdmissionReview."""
    if path.endswith(".json"):
        obj: dict[str, Any] = read_review(path)["request"]["object"]
        return obj
    (manifest,) = parse((DATA / path).read_text(), path)
    data: dict[str, Any] = manifest.data
    return data


def read_review(path: str) -> dict[str, Any]:
    """An AdmissionReview body under tests/data."""
    body: dict[str, Any] = json.loads((DATA / path).read_text())
    return body


def read_update(path: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """(object, oldObject) of an AdmissionReview of an UPDATE under tests/data."""
    request = read_review(path)["request"]
    return request["object"], request["oldObject"]


def settings_for(case: Case) -> Settings:
    return load_config(str(DATA / case.config) if case.config else None).to_settings()


def _metadata(obj: dict[str, Any], key: str) -> str:
    value = obj.get("metadata", {}).get(key)
    return value if isinstance(value, str) else ""


def admit_case(case: Case, settings: Settings) -> Admission:
    """What jobguard's admission chain makes of the case, entered as its command enters it:
    a review through the webhook's own parser (validating stage), a manifest as `check` builds
    it (mutating, then validating)."""
    if case.command == "review":
        parsed = parse_review((DATA / case.file).read_bytes())
        return admit(parsed.request, settings, Stage.VALIDATING)
    new = read_object(case.file)
    common: dict[str, Any] = {
        "name": _metadata(new, "name"),
        "requester": Requester(CHECK_USER, CHECK_GROUPS),
    }
    if case.old is not None:
        old = read_object(case.old)
        request = Request(
            new["kind"], Operation.UPDATE, new, old, subresource=case.subresource, **common
        )
    else:
        request = Request(new["kind"], Operation.CREATE, new, **common)
    return admit(request, settings, BOTH_STAGES)
