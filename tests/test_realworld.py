"""Public Job and CronJob manifests (tests/data/realworld) are accepted, as CREATE and as an
unchanged UPDATE, exactly as the API server accepts them; each is listed with its source and
license in SOURCES.md."""

from __future__ import annotations

import re
from typing import Any

import pytest
import yaml

from tests.builders import create, update
from tests.corpus import REALWORLD, realworld_files

# A documentation snippet, not a complete manifest (SOURCES.md: "probably invalid").
KNOWN_INVALID = {
    "kubernetes__website__content_en_examples_controllers_job-success-policy-example.yaml"
}


def documents() -> list[tuple[str, int, dict[str, Any]]]:
    out = []
    for path in realworld_files():
        for i, doc in enumerate(yaml.safe_load_all(path.read_text())):
            if isinstance(doc, dict) and doc.get("kind") in ("Job", "CronJob"):
                out.append((path.name, i, doc))
    return out


DOCS = documents()


def test_corpus_is_present() -> None:
    assert len(DOCS) >= 40


def test_every_file_has_its_source_and_license() -> None:
    sources = (REALWORLD / "SOURCES.md").read_text()
    rows = re.findall(
        r"^\| \d+ \| `([^`]+)` \| ([^|]+) \|.*\| (Apache-2\.0|CC-BY-4\.0)", sources, re.M
    )
    urls = dict(re.findall(r"^- `([^`]+)`: (https://github\.com/\S+)$", sources, re.M))
    names = {p.name for p in realworld_files()}
    assert {name for name, _, _ in rows} == names == set(urls)
    for name, repo, _ in rows:
        assert urls[name].startswith(f"https://github.com/{repo.strip()}/blob/"), name
    assert (
        (REALWORLD / "LICENSES" / "Apache-2.0.txt")
        .read_text()
        .startswith("\n                                 Apache License\n")
    )
    notice = (REALWORLD / "NOTICE").read_text()
    for repo in {repo.strip() for _, repo, _ in rows}:
        assert repo in notice, repo


@pytest.mark.parametrize(("name", "index", "doc"), DOCS, ids=[f"{n}#{i}" for n, i, _ in DOCS])
def test_realworld_manifest(name: str, index: int, doc: dict[str, Any]) -> None:
    verdict = create(doc, kind=doc["kind"])
    if name in KNOWN_INVALID:
        assert [(v.error.rule, v.error.path) for v in verdict.unique()] == [
            ("OM-001", "metadata.name"),  # no name: ValidateObjectMeta comes first
            ("JS-005", "spec.template.spec.restartPolicy"),
            ("JS-007", "metadata.name"),
        ]
        return
    assert verdict.allowed, [v.error.message() for v in verdict.violations]
    assert verdict.violations == []
    assert update(doc, doc, kind=doc["kind"]).violations == []
