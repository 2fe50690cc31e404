"""`jobguard check`: the webhook's admission chain on manifest files, offline.

Each Job or CronJob document goes through both stages of the chain (`validators.admit`), as an
applied manifest goes through the cluster's: a CREATE, or, when `--old` holds a document with
the same apiVersion, kind, namespace and name, an UPDATE (of `/status` with `--subresource
status`).

Nothing passes silently: every document is judged, skipped and named (other kinds, Helm
templates), or an error (a document that cannot be parsed, or one that looks like a Job or
CronJob but that the API server would not take as one); an input without any document is an
error too.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import math
import os
import subprocess
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jobguard.app.cli.limits import MAX_FILE_BYTES
from jobguard.app.cli.manifests import (
    STDIN,
    Inputs,
    Manifest,
    ManifestError,
    display_name,
    parse_all,
    read_file,
    read_manifests,
)
from jobguard.app.exits import ExitCode
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
from jobguard.validators.errors import ABSENT, OMITTED, FieldChange

JUDGED = {("batch/v1", "Job"), ("batch/v1", "CronJob")}
DEFAULT_USER = "jobguard-check"
DEFAULT_GROUPS = ("system:authenticated",)

NOT_JUDGED = "not a batch/v1 Job or CronJob"
NOT_AN_OBJECT = "not a Kubernetes object (no kind)"
TEMPLATE = "template, not plain YAML"
NO_DOCUMENTS = "no documents (empty input)"
NO_OBJECTS = "no Kubernetes object (empty, or only comments)"
FOREIGN = "YAML for another tool (tags {}), not a Kubernetes object"
NO_MANIFEST_FILES = "no manifest files (*.yaml, *.yml, *.json)"

CRD_HINT = "ensure CRDs are installed first"

PairKey = tuple[str, str, str, str]


@dataclass(frozen=True, slots=True)
class ChangeRecord:
    """A field that differs from the stored object (None on the side that does not set it)."""

    field: str
    old: Any = None
    new: Any = None


@dataclass(frozen=True, slots=True)
class ViolationRecord:
    rule: str
    field: str
    type: str
    message: str
    enforcement: str
    line: int
    column: int
    changes: tuple[ChangeRecord, ...] = ()
    """For immutability findings (TM-001, TM-003, IM-): the fields that differ."""
    brief: str = ""
    """The message without the value it echoes, when `changes` say more (else empty)."""


@dataclass(frozen=True, slots=True)
class MutationRecord:
    """What the mutating webhook would change before validation (a suspend policy)."""

    field: str
    value: Any
    policy: str
    message: str
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
    mutations: list[MutationRecord] = field(default_factory=list)
    api_version: str = "batch/v1"
    operation: str = "CREATE"
    """UPDATE when judged against a stored version (`--old`, `--base`)."""
    recreated: str = ""
    """Why a document with a stored version was judged as a CREATE (see `recreated_by`)."""


@dataclass(frozen=True, slots=True)
class SkippedDocument:
    """A document not judged, and why: another kind, or a template."""

    file: str
    line: int
    reason: str
    document: int | None = None
    """Its position among the file's objects; None for a template (not read as objects)."""
    api_version: str = ""
    kind: str = ""
    name: str = ""


@dataclass(frozen=True, slots=True)
class InputError:
    """An input that cannot be judged: unreadable, unparsable, empty, or a document that looks
    like a Job or CronJob in a form the API server does not serve."""

    file: str
    line: int
    """1-based; 0 when the error is about the whole file."""
    message: str
    document: int | None = None

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.message}"


Finding = DocumentResult | SkippedDocument | InputError
"""What became of one document (or of a file that has none to give)."""


@dataclass(slots=True)
class FileOutcome:
    file: str
    findings: list[Finding] = field(default_factory=list)
    """In the file's order."""

    @property
    def results(self) -> list[DocumentResult]:
        return [f for f in self.findings if isinstance(f, DocumentResult)]

    @property
    def skipped_documents(self) -> list[SkippedDocument]:
        return [f for f in self.findings if isinstance(f, SkippedDocument)]

    @property
    def problems(self) -> list[InputError]:
        return [f for f in self.findings if isinstance(f, InputError)]

    @property
    def documents(self) -> int:
        """Documents seen: judged, skipped, or in error (not a file without any)."""
        return sum(
            1 for f in self.findings if not isinstance(f, InputError | SkippedDocument) or f.line
        )

    @property
    def skipped(self) -> int:
        return len(self.skipped_documents)

    @property
    def error(self) -> str | None:
        """The first error, as a line (`FILE:LINE: message`)."""
        problems = self.problems
        return str(problems[0]) if problems else None


@dataclass(slots=True)
class CheckReport:
    outcomes: list[FileOutcome]
    excluded: list[str] = field(default_factory=list)
    """Files `--exclude` left out."""
    input_problems: list[InputError] = field(default_factory=list)
    """Errors about the command line's inputs rather than one file (empty directories)."""
    fail_on: str = Enforcement.DENY.value
    """The lowest enforcement that fails the run: deny, or warn (`--fail-on warning`)."""
    quiet: bool = False
    """`--quiet`: the text and github outputs leave skipped documents out."""

    @property
    def results(self) -> list[DocumentResult]:
        return [r for o in self.outcomes for r in o.results]

    @property
    def skipped_documents(self) -> list[SkippedDocument]:
        return [s for o in self.outcomes for s in o.skipped_documents]

    @property
    def problems(self) -> list[InputError]:
        """Every input error, in the order of the inputs."""
        return self.input_problems + [p for o in self.outcomes for p in o.problems]

    @property
    def errors(self) -> list[str]:
        return [str(p) for p in self.problems]

    def summary(self) -> dict[str, int]:
        results = self.results
        return {
            "files": len(self.outcomes),
            "documents": sum(o.documents for o in self.outcomes),
            "checked": len(results),
            "skipped": sum(o.skipped for o in self.outcomes),
            "errors": len(self.problems),
            "excluded": len(self.excluded),
            "violations": sum(len(r.violations) for r in results),
            "deny": self.count(Enforcement.DENY.value),
            "warn": self.count(Enforcement.WARN.value),
            "dryrun": self.count(Enforcement.DRYRUN.value),
            "mutations": sum(len(r.mutations) for r in results),
        }

    def count(self, enforcement: str) -> int:
        return sum(1 for r in self.results for v in r.violations if v.enforcement == enforcement)

    @property
    def exit_code(self) -> int:
        """1 for a deny-level violation (or a warn-level one with `fail_on` warn), whatever
        else happened; else 2 for any input error; else 0. A violation comes first: a pipeline
        that tolerates 2 (a tool or input problem) must never let a deny through with it."""
        failing = self.count(Enforcement.DENY.value)
        if self.fail_on == Enforcement.WARN.value:
            failing += self.count(Enforcement.WARN.value)
        if failing:
            return ExitCode.FINDINGS
        return ExitCode.UNUSABLE if self.problems else ExitCode.OK


@dataclass(frozen=True, slots=True)
class CheckOptions:
    settings: Settings
    requester: Requester = field(default_factory=lambda: Requester(DEFAULT_USER, DEFAULT_GROUPS))
    subresource: str = ""
    old: dict[PairKey, dict[str, Any]] = field(default_factory=dict)
    base: dict[tuple[str, PairKey], dict[str, Any]] = field(default_factory=dict)
    """The versions at `--base REV`, by file (as named on the command line) and pair key."""
    max_file_bytes: int = MAX_FILE_BYTES
    """Larger files are refused unread (`manifests.read_bytes`)."""


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


def index_old(paths: Iterable[str], limit: int = MAX_FILE_BYTES) -> dict[PairKey, dict[str, Any]]:
    """The `--old` documents by pair key (ManifestError when one cannot be read)."""
    index: dict[PairKey, dict[str, Any]] = {}
    for path in paths:
        for manifest in read_manifests(path, limit):
            key = pair_key(manifest.data)
            if key is not None:
                index[key] = manifest.data
    return index


class BaseError(ValueError):
    """`--base REV` cannot be used: not a git repository, or an unknown revision."""


def _git(directory: str, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        ["git", "-C", directory, *args], capture_output=True, check=False, timeout=60
    )


def index_base(rev: str, files: Iterable[str]) -> dict[tuple[str, PairKey], dict[str, Any]]:
    """The documents of each file as it was at git revision `rev` (`git show REV:path`, in
    the repository holding the file), by the file's name as given and pair key; a file that
    did not exist at `rev` adds nothing. BaseError when a file is not in a git repository or
    `rev` names no commit there."""
    index: dict[tuple[str, PairKey], dict[str, Any]] = {}
    checked: dict[str, str] = {}  # a directory's repository (its top level)
    commits: set[str] = set()
    for path in files:
        if path == STDIN:
            continue
        directory = os.path.dirname(os.path.abspath(path))
        top = checked.get(directory)
        if top is None:
            found = _git(directory, "rev-parse", "--show-toplevel")
            if found.returncode != 0:
                raise BaseError(f"{path} is not in a git repository")
            top = checked[directory] = found.stdout.decode().strip()
        if top not in commits:
            verified = _git(top, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")
            if verified.returncode != 0:
                raise BaseError(f"unknown revision in {top} (git fetch it first?)")
            commits.add(top)
        relative = os.path.relpath(os.path.realpath(path), os.path.realpath(top))
        shown = _git(top, "show", f"{rev}:{relative}")
        if shown.returncode != 0:
            continue  # not there at REV: a new file
        text = shown.stdout.decode("utf-8-sig", "replace").replace("\r\n", "\n")
        name = display_name(path)
        for manifest in parse_all(text, name).manifests:
            key = pair_key(manifest.data)
            if key is not None:
                index[(name, key)] = manifest.data
    return index


def with_namespace(data: dict[str, Any], namespace: str) -> dict[str, Any]:
    metadata = data.get("metadata")
    if not isinstance(metadata, dict) or metadata.get("namespace"):
        return data
    return {**data, "metadata": {**metadata, "namespace": namespace}}


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _name(data: dict[str, Any]) -> str:
    metadata = data.get("metadata")
    return _text(metadata.get("name")) if isinstance(metadata, dict) else ""


def kind_problem(data: Any) -> tuple[bool, str]:
    """Whether a document is judged: (True, "") for a batch/v1 Job or CronJob; (False,
    message) for one the API server would refuse as a Job or CronJob (a kind in the wrong
    case, a removed or unknown batch version); (False, "") for any other document."""
    if not isinstance(data, dict):
        return False, ""
    kind, version = data.get("kind"), _text(data.get("apiVersion"))
    if not isinstance(kind, str) or not kind:
        return False, ""
    if (version, kind) in JUDGED:
        return True, ""
    group = version.partition("/")[0] if "/" in version else ""
    looks_like_a_job = kind.lower() in ("job", "cronjob") and "/" not in version
    if group.lower() != "batch" and not looks_like_a_job:
        return False, ""
    if not version:
        return False, f'apiVersion not set for kind "{kind}" (Job and CronJob are batch/v1)'
    # kubectl's words (`no matches for kind ... in version ...`): the API server has no such type.
    return False, f'no matches for kind "{kind}" in version "{version}"'


RECREATED_ANNOTATION = "jobguard.io/recreated"
"""Set to "true" on an object that whatever deploys it deletes and creates anew (a script's
`kubectl replace --force`): `--base` and `--old` judge it as a CREATE."""


def _annotation_words(annotations: dict[str, Any], key: str) -> list[str]:
    value = annotations.get(key)
    if not isinstance(value, str):
        return []
    return [word.strip().lower() for word in value.split(",") if word.strip()]


def recreated_by(data: dict[str, Any]) -> str:
    """Why the deployer deletes this object and creates it anew rather than updating it, from
    its annotations ("" when it updates it): the API server then sees a CREATE, and the
    immutability rules of an UPDATE do not apply.

    - Argo CD: `argocd.argoproj.io/sync-options` with `Replace=true` (replace, or delete and
      create), or any `argocd.argoproj.io/hook` (hooks are created on every sync; their
      default delete policy is BeforeHookCreation);
    - Helm: a `helm.sh/hook` whose `helm.sh/hook-delete-policy` includes
      `before-hook-creation` or `hook-succeeded`, or is absent (Helm's default is
      before-hook-creation);
    - Flux: `kustomize.toolkit.fluxcd.io/force: enabled` (recreated when a field is immutable);
    - anything else: `jobguard.io/recreated: "true"`.
    """
    metadata = data.get("metadata")
    annotations = metadata.get("annotations") if isinstance(metadata, dict) else None
    if not isinstance(annotations, dict):
        return ""
    if "replace=true" in _annotation_words(annotations, "argocd.argoproj.io/sync-options"):
        return "argocd.argoproj.io/sync-options: Replace=true"
    if isinstance(annotations.get("argocd.argoproj.io/hook"), str):
        return f"argocd.argoproj.io/hook: {annotations['argocd.argoproj.io/hook']}"
    if isinstance(annotations.get("helm.sh/hook"), str):
        policies = _annotation_words(annotations, "helm.sh/hook-delete-policy")
        if not policies:
            return "helm.sh/hook (default delete policy before-hook-creation)"
        recreating = [p for p in policies if p in ("before-hook-creation", "hook-succeeded")]
        if recreating:
            return f"helm.sh/hook-delete-policy: {recreating[0]}"
    if _annotation_words(annotations, "kustomize.toolkit.fluxcd.io/force") == ["enabled"]:
        return "kustomize.toolkit.fluxcd.io/force: enabled"
    if _annotation_words(annotations, RECREATED_ANNOTATION) == ["true"]:
        return f"{RECREATED_ANNOTATION}: true"
    return ""


def _judge(manifest: Manifest, options: CheckOptions) -> DocumentResult:
    """The result for a document known to be a batch/v1 Job or CronJob (see `examine`)."""
    data = manifest.data
    kind = str(data["kind"])
    old = None
    if options.old or options.base:  # (no pairing to look for without `--old`, `--base`)
        key = pair_key(data)
        if key is not None:
            old = options.old.get(key)
            if old is None:
                old = options.base.get((manifest.file, key))
                if old == data:
                    old = None  # unchanged since REV: judged as a CREATE, as without --base
    recreated = recreated_by(data) if old is not None else ""
    if recreated:
        old = None  # deleted and created anew by its deployer: the API server sees a CREATE
    # kubectl sets the namespace it applies to; judge the objects the cluster would see.
    namespace = resolve_namespace("", data)
    new_object = with_namespace(data, namespace)
    if old is None:
        # (The namespace given, resolved already: not looked up again.)
        request = Request(
            kind,
            Operation.CREATE,
            new_object,
            namespace=namespace,
            requester=options.requester,
            manifest=True,
        )
    else:
        request = Request(
            kind,
            Operation.UPDATE,
            new_object,
            with_namespace(old, namespace),
            subresource=options.subresource,
            namespace=namespace,
            requester=options.requester,
            manifest=True,
        )
    admission = admit(request, options.settings)
    verdict = admission.verdict
    assert verdict is not None  # both stages were asked
    records = [_record(manifest, violation) for violation in verdict.unique()]
    mutations = []
    policy = admission.mutation.policy
    if policy is not None:
        line, column = manifest.locate("spec.suspend")
        message = f'spec.suspend would be set to true by policy "{policy.name}"'
        mutations.append(MutationRecord("spec.suspend", True, policy.name, message, line, column))
    return DocumentResult(
        manifest.file,
        manifest.position,
        kind,
        request.namespace,
        verdict.name,
        records,
        mutations,
        operation=request.operation.value,
        recreated=recreated,
    )


def _change(change: FieldChange) -> ChangeRecord:
    return ChangeRecord(
        change.path,
        None if change.old is ABSENT else change.old,
        None if change.new is ABSENT else change.new,
    )


def _record(manifest: Manifest, violation: Violation) -> ViolationRecord:
    error = violation.error
    line, column = manifest.locate(error.path)
    brief = dataclasses.replace(error, value=OMITTED).body() if error.changes else ""
    return ViolationRecord(
        error.rule,
        error.path,
        error.type.reason,
        error.body(),
        violation.enforcement.value,
        line,
        column,
        tuple(_change(c) for c in error.changes),
        brief,
    )


def examine(
    manifest: Manifest, options: CheckOptions
) -> DocumentResult | SkippedDocument | InputError:
    """What becomes of one document: judged, skipped (and why), or an error."""
    judged, problem = kind_problem(manifest.data)
    if judged:
        return _judge(manifest, options)
    data = manifest.data
    line = manifest.locate("kind" if isinstance(data, dict) and "kind" in data else "")[0]
    if problem:
        if problem.startswith("no matches"):
            # kubectl's whole error: the object as the file names it, and its hint.
            metadata = data.get("metadata")
            namespace = _text(metadata.get("namespace")) if isinstance(metadata, dict) else ""
            problem = (
                f'resource mapping not found for name: "{_name(data)}" namespace: "{namespace}" '
                f'from "{manifest.file}": {problem}\n{CRD_HINT}'
            )
        return InputError(manifest.file, line, problem, manifest.position)
    if not isinstance(data, dict) or not isinstance(data.get("kind"), str) or not data["kind"]:
        return SkippedDocument(manifest.file, line, NOT_AN_OBJECT, manifest.position)
    return SkippedDocument(
        manifest.file,
        line,
        NOT_JUDGED,
        manifest.position,
        _text(data.get("apiVersion")),
        data["kind"],
        _name(data),
    )


def check_file(path: str, options: CheckOptions) -> FileOutcome:
    outcome = FileOutcome(display_name(path))
    try:
        parsed = read_file(path, options.max_file_bytes)
    except ManifestError as exc:
        outcome.findings.append(InputError(exc.file or outcome.file, exc.line, exc.reason))
        return outcome
    found: list[tuple[int, Finding]] = [
        (e.line, InputError(e.file, e.line, e.reason)) for e in parsed.errors
    ]
    found += [(t.line, SkippedDocument(t.file, t.line, TEMPLATE)) for t in parsed.templates]
    found += [
        (f.line, SkippedDocument(f.file, f.line, FOREIGN.format(" ".join(f.tags))))
        for f in parsed.foreign
    ]
    found += [(m.first_line + 1, examine(m, options)) for m in parsed.manifests]
    # An error raised and caught while judging keeps the frames of its traceback, this one
    # included, until the collector finds the cycle: let go of the file's documents now, so
    # that they are freed at once instead of being scanned by `gc.collect` below.
    del parsed
    # In the file's order (stable: the objects of one List keep theirs).
    outcome.findings = [finding for _, finding in sorted(found, key=lambda item: item[0])]
    if not outcome.findings:
        # A file in a repository may hold no object (values, a placeholder): skipped. Standard
        # input with none is a pipeline that produced nothing (`helm template` of a typo).
        outcome.findings.append(
            InputError(outcome.file, 0, NO_DOCUMENTS)
            if path == STDIN
            else SkippedDocument(outcome.file, 0, NO_OBJECTS)
        )
    # Reference cycles made while judging this file (see `batch_collection`).
    gc.collect(0)
    return outcome


@contextmanager
def batch_collection() -> Iterator[None]:
    """Switch the cyclic collector's automatic passes off for a batch run: they rescan all
    the results kept so far, about a sixth of a large run's time. `check_file` collects the
    young objects after each file, so cycles are still reclaimed, each object scanned once."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


_WORKER_OPTIONS: CheckOptions | None = None
MAX_CHUNK = 64
"""Files sent to a worker at once, at most."""
AUTO = 0
"""`jobs` for `--jobs auto` (see `auto_jobs`)."""


def _init_worker(options: CheckOptions) -> None:
    global _WORKER_OPTIONS
    _WORKER_OPTIONS = options
    gc.disable()  # a worker only runs check_file, which collects after each file


def _check_in_worker(path: str) -> FileOutcome:
    assert _WORKER_OPTIONS is not None
    return check_file(path, _WORKER_OPTIONS)


AUTO_BYTES_PER_WORKER = 1024 * 1024
"""`--jobs auto` adds a worker per this much input (about 1,000 documents, a few tenths of a
second of judging): below it a worker's start-up and the round trips cost more than it saves."""


def usable_cpus() -> int:
    """The CPUs this process may run on: its affinity, lowered by a cgroup v2 CPU quota (a
    container limited to 2 CPUs on a 64-CPU node must not start 64 workers)."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cpus = os.cpu_count() or 1
    try:
        quota, period = Path("/sys/fs/cgroup/cpu.max").read_text().split()[:2]
        if quota != "max":
            cpus = min(cpus, max(1, math.ceil(int(quota) / int(period))))
    except (OSError, ValueError):
        pass
    return cpus


def auto_jobs(files: list[str]) -> int:
    """`--jobs auto`: one worker per AUTO_BYTES_PER_WORKER of input, at most `usable_cpus()`."""
    size = 0
    for path in files:
        with contextlib.suppress(OSError):
            size += os.stat(path).st_size if path != STDIN else 0
    return max(1, min(usable_cpus(), size // AUTO_BYTES_PER_WORKER))


def check(paths: list[str] | Inputs, options: CheckOptions, jobs: int = 1) -> CheckReport:
    """Judge every file; results keep the order of the paths. `Inputs` (from
    `manifests.collect`) also carry what `--exclude` left out and empty directories."""
    inputs = paths if isinstance(paths, Inputs) else Inputs(files=list(paths))
    files = inputs.files
    report = CheckReport(
        [],
        list(inputs.excluded),
        [InputError(d, 0, NO_MANIFEST_FILES) for d in inputs.empty_directories],
    )
    parallel = [p for p in files if p != STDIN]
    if jobs == AUTO:
        jobs = auto_jobs(parallel)
    if jobs <= 1 or len(parallel) < 2:
        with batch_collection():
            report.outcomes = [check_file(p, options) for p in files]
        return report
    # Imported here: a run in one process need not load multiprocessing.
    from concurrent.futures import ProcessPoolExecutor

    outcomes: dict[str, FileOutcome] = {}
    with ProcessPoolExecutor(jobs, initializer=_init_worker, initargs=(options,)) as pool:
        # Files go out in chunks: one round trip a file costs more than judging a small one
        # (a repository of one Job a file). Eight chunks a worker still evens out the load.
        chunksize = max(1, min(MAX_CHUNK, len(parallel) // (jobs * 8)))
        for path, outcome in zip(
            parallel, pool.map(_check_in_worker, parallel, chunksize=chunksize), strict=True
        ):
            outcomes[path] = outcome
    report.outcomes = [outcomes[p] if p in outcomes else check_file(p, options) for p in files]
    return report
