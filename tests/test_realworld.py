"""Public Job and CronJob manifests (shared/examples/realworld) are accepted, as CREATE and as
an unchanged UPDATE, exactly as the API server accepts them."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.builders import create, update

REALWORLD = Path(__file__).resolve().parents[2] / "shared" / "examples" / "realworld"
# A documentation snippet, not a complete manifest (SOURCES.md: "probably invalid").
KNOWN_INVALID = {
    "kubernetes__website__content_en_examples_controllers_job-success-policy-example.yaml"
}


def documents() -> list[tuple[str, int, dict]]:
    if not REALWORLD.is_dir():
        return []
    out = []
    for path in sorted(REALWORLD.glob("*.yaml")):
        for i, doc in enumerate(yaml.safe_load_all(path.read_text())):
            if isinstance(doc, dict) and doc.get("kind") in ("Job", "CronJob"):
                out.append((path.name, i, doc))
    return out


DOCS = documents()


@pytest.mark.skipif(not DOCS, reason="shared/examples/realworld is not beside this checkout")
def test_corpus_is_present() -> None:
    assert len(DOCS) >= 40


@pytest.mark.parametrize(("name", "index", "doc"), DOCS, ids=[f"{n}#{i}" for n, i, _ in DOCS])
def test_realworld_manifest(name: str, index: int, doc: dict) -> None:
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
