"""`jobguard check`: the webhook's admission chain on manifest files, offline.

Each Job or CronJob document goes through both stages of the chain (`validators.admit`), as an
applied manifest goes through the cluster's: a CREATE, or, when `--old` holds a document with
the same apiVersion, kind, namespace and name, an UPDATE (of `/status` with `--subresource
status`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from jobguard.app.manifests import STDIN, Manifest, ManifestError, read_manifests
from jobguard.validators import (
    Enforcement,
    Operation,
    Request,
    Requester,
    Settings,
    Violation,
    admit,
    resolve_namespace,
)

JUDGED = {("batch/v1", "Job"), ("batch/v1", "CronJob")}
DEFAULT_USER = "jobguard-check"
DEFAULT_GROUPS = ("system:authenticated",)

PairKey = tuple[str, str, str, str]


@dataclass(frozen=True, slots=True)
class ViolationRecord:
    rule: str
    field: str
    type: str
    message: str
    enforcement: str
    line: int
    column: int


@dataclass(slots=True)
class DocumentResult:
    file: str
    document: int
    kind: str
    namespace: str
    name: str
    violations: list[ViolationRecord]


@dataclass(slots=True)
class FileOutcome:
    file: str
    documents: int = 0
    skipped: int = 0
    results: list[DocumentResult] = field(default_factory=list)
    error: str | None = None


@dataclass(slots=True)
class CheckReport:
    outcomes: list[FileOutcome]

    @property
    def results(self) -> list[DocumentResult]:
        return [r for o in self.outcomes for r in o.results]

    @property
    def errors(self) -> list[str]:
        return [o.error for o in self.outcomes if o.error is not None]

    def summary(self) -> dict[str, int]:
        results = self.results
        return {
            "files": len(self.outcomes),
            "documents": sum(o.documents for o in self.outcomes),
            "checked": len(results),
            "skipped": sum(o.skipped for o in self.outcomes),
            "violations": sum(len(r.violations) for r in results),
        }

    def count(self, enforcement: str) -> int:
        return sum(1 for r in self.results for v in r.violations if v.enforcement == enforcement)

    @property
    def exit_code(self) -> int:
        if self.errors:
            return 2
        return 1 if self.count(Enforcement.DENY.value) else 0


@dataclass(frozen=True, slots=True)
class CheckOptions:
    settings: Settings
    requester: Requester = field(default_factory=lambda: Requester(DEFAULT_USER, DEFAULT_GROUPS))
    subresource: str = ""
    old: dict[PairKey, dict[str, Any]] = field(default_factory=dict)


def pair_key(data: Any) -> PairKey | None:
    """(apiVersion, kind, namespace, name); None when the document has no name to pair by."""
    if not isinstance(data, dict):
        return None
    metadata = data.get("metadata")
    metadata = metadata if isinstance(metadata, dict) else {}
    name = metadata.get("name")
    if not isinstance(name, str) or not name:
        return None
    namespace = resolve_namespace("", data)
    return (str(data.get("apiVersion")), str(data.get("kind")), namespace, name)


def index_old(paths: Iterable[str]) -> dict[PairKey, dict[str, Any]]:
    """The `--old` documents by pair key (ManifestError when one cannot be read)."""
    index: dict[PairKey, dict[str, Any]] = {}
    for path in paths:
        for manifest in read_manifests(path):
            key = pair_key(manifest.data)
            if key is not None:
                index[key] = manifest.data
    return index


def _with_namespace(data: dict[str, Any], namespace: str) -> dict[str, Any]:
    metadata = data.get("metadata")
    if not isinstance(metadata, dict) or metadata.get("namespace"):
        return data
    return {**data, "metadata": {**metadata, "namespace": namespace}}


def judge(manifest: Manifest, options: CheckOptions) -> DocumentResult | None:
    """The result for one document, or None when it is not a batch/v1 Job or CronJob."""
    data = manifest.data
    if not isinstance(data, dict) or (data.get("apiVersion"), data.get("kind")) not in JUDGED:
        return None
    kind = str(data["kind"])
    key = pair_key(data)
    old = options.old.get(key) if key is not None else None
    if old is None:
        request = Request(kind, Operation.CREATE, data, requester=options.requester, manifest=True)
    else:
        request = Request(
            kind,
            Operation.UPDATE,
            data,
            old,
            subresource=options.subresource,
            requester=options.requester,
            manifest=True,
        )
    # kubectl sets the namespace it applies to; judge the objects the cluster would see.
    request = dataclasses.replace(
        request,
        object=_with_namespace(data, request.namespace),
        old_object=_with_namespace(old, request.namespace) if old is not None else None,
    )
    verdict = admit(request, options.settings).verdict
    assert verdict is not None  # both stages were asked
    records = [_record(manifest, violation) for violation in verdict.unique()]
    return DocumentResult(
        manifest.file, manifest.position, kind, request.namespace, verdict.name, records
    )


def _record(manifest: Manifest, violation: Violation) -> ViolationRecord:
    error = violation.error
    line, column = manifest.locate(error.path)
    return ViolationRecord(
        error.rule,
        error.path,
        error.type.reason,
        error.body(),
        violation.enforcement.value,
        line,
        column,
    )


def check_file(path: str, options: CheckOptions) -> FileOutcome:
    outcome = FileOutcome("<stdin>" if path == STDIN else path)
    try:
        manifests = read_manifests(path)
    except ManifestError as exc:
        outcome.error = str(exc)
        return outcome
    for manifest in manifests:
        outcome.documents += 1
        result = judge(manifest, options)
        if result is None:
            outcome.skipped += 1
        else:
            outcome.results.append(result)
    return outcome


_WORKER_OPTIONS: CheckOptions | None = None


def _init_worker(options: CheckOptions) -> None:
    global _WORKER_OPTIONS
    _WORKER_OPTIONS = options


def _check_in_worker(path: str) -> FileOutcome:
    assert _WORKER_OPTIONS is not None
    return check_file(path, _WORKER_OPTIONS)


def check(paths: list[str], options: CheckOptions, jobs: int = 1) -> CheckReport:
    """Judge every file; results keep the order of `paths`."""
    parallel = [p for p in paths if p != STDIN]
    if jobs <= 1 or len(parallel) < 2:
        return CheckReport([check_file(p, options) for p in paths])
    outcomes: dict[str, FileOutcome] = {}
    with ProcessPoolExecutor(jobs, initializer=_init_worker, initargs=(options,)) as pool:
        chunksize = max(1, len(parallel) // (jobs * 8))
        for path, outcome in zip(
            parallel, pool.map(_check_in_worker, parallel, chunksize=chunksize), strict=True
        ):
            outcomes[path] = outcome
    return CheckReport([outcomes[p] if p in outcomes else check_file(p, options) for p in paths])
