"""The one judgement pipeline every entry point uses, through the admission chain (`chain.admit`).

request -> prepare (replay the API server) -> decode (typed, strict) -> lifecycle model ->
rule checks in upstream order -> resolved per configured rule -> Verdict.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import groupby, repeat
from operator import attrgetter
from typing import Any

import orjson

from jobguard.validators.catalog import Enforcement
from jobguard.validators.context import (
    CronJobContext,
    JobContext,
    JobCreateContext,
    JobStatusContext,
    JobUpdateContext,
    Operation,
    Request,
    Requester,
)
from jobguard.validators.drop import drop_disabled_template_fields
from jobguard.validators.errors import OMITTED, ErrorType, FieldError, render_value, unreadable
from jobguard.validators.lifecycle import JobState, classify
from jobguard.validators.memo import ACTIVE_CACHES, OwnedMemo
from jobguard.validators.model import (
    DecodeProblem,
    Job,
    JobJson,
    ObjectDecodeError,
    decode_cronjob,
    decode_job,
)
from jobguard.validators.policy import SuspendPolicy
from jobguard.validators.prepare import (
    apply_job_defaults,
    prepare_create,
    prepare_cronjob_update,
    prepare_status_update,
    prepare_stored,
    prepare_update,
)
from jobguard.validators.rules.cronjob_schedule import (
    validate_cronjob_spec_head,
    validate_cronjob_spec_tail,
)
from jobguard.validators.rules.cronjob_template import validate_job_template_spec
from jobguard.validators.rules.immutable import validate_job_spec_update
from jobguard.validators.rules.jobspec import validate_indexed_hostname, validate_job_spec
from jobguard.validators.rules.metadata_update import (
    validate_labels_and_annotations,
    validate_object_meta_update,
    with_syntax,
    without_syntax,
)
from jobguard.validators.rules.object_names import (
    NameOptions,
    validate_cron_job_create,
    validate_object_meta,
    validate_object_meta_accessor,
)
from jobguard.validators.rules.pod import validate_pod_template_spec
from jobguard.validators.rules.pod_common import PodOptions, member
from jobguard.validators.rules.pod_util import get_validation_options_from_pod_template
from jobguard.validators.rules.schema import SchemaOptions, check_schema
from jobguard.validators.rules.status import validate_job_status, validate_job_status_update
from jobguard.validators.rules.suspend import (
    SuspendOptions,
    SuspendUpdateOptions,
    check_suspend_status,
    check_suspend_update,
    suspend_options,
)
from jobguard.validators.rules.suspend_policy import (
    PolicyOptions,
    PolicyUpdateOptions,
    check_cronjob_policy,
    check_forced_suspend_kept,
    check_policy_labels,
    check_suspend_policy_create,
    check_suspend_policy_update,
    needs_forced_suspend,
    policy_options,
)
from jobguard.validators.rules.template import (
    validate_generated_selector,
    validate_job_spec_selector,
    validate_pod_template_update,
)
from jobguard.validators.settings import Settings
from jobguard.validators.strategy import JobOptions, SpecOptions, job_options, status_options

JUDGED_KINDS = ("Job", "CronJob")
DECODE_RULE = "DEC-001"
_RULE = attrgetter("rule")


@dataclass(frozen=True, slots=True)
class Violation:
    error: FieldError
    enforcement: Enforcement


@dataclass(slots=True)
class Verdict:
    """The outcome of one request."""

    kind: str
    name: str
    judged: bool
    """False when the request is not one jobguard judges (allowed at once)."""
    violations: list[Violation] = field(default_factory=list)
    """Every enabled rule's error, in upstream order, with upstream's repeats (see `unique`)."""
    decode_error: ObjectDecodeError | None = None
    """Why the object could not be read (no other rule ran); a DEC-001 violation as configured."""
    context: JobContext | CronJobContext | None = None

    @property
    def denials(self) -> list[Violation]:
        return [v for v in self.violations if v.enforcement is Enforcement.DENY]

    @property
    def allowed(self) -> bool:
        return not any(v.enforcement is Enforcement.DENY for v in self.violations)

    def unique(self, enforcement: Enforcement | None = None) -> list[Violation]:
        """Violations without upstream's repeated copies, optionally of one enforcement."""
        seen: set[object] = set()
        out = []
        for v in self.violations:
            key = _identity(v.error)
            if key in seen or (enforcement is not None and v.enforcement is not enforcement):
                continue
            seen.add(key)
            out.append(v)
        return out


def _identity(error: FieldError) -> object:
    """What makes two errors the same message (rule, path, body), without rendering the body
    or building a key per error: a request can carry 250,000 errors."""
    value = error.value
    if isinstance(value, str | int | float | type(None)) or value is OMITTED:
        return error  # hashable: the error itself is the key
    return (error.rule, error.path, error.type, error.detail, render_value(value))


def _name_of(raw: Any, fallback: str) -> str:
    if isinstance(raw, dict):
        metadata = raw.get("metadata")
        if isinstance(metadata, dict):
            name = metadata.get("name") or metadata.get("generateName")
            if isinstance(name, str) and name:
                return name
    return fallback


def _job_context(request: Request, settings: Settings) -> JobContext:
    """Prepare, decode and model a Job request (raises ObjectDecodeError)."""
    new_raw: Any = request.object
    if not isinstance(new_raw, dict):
        raise ObjectDecodeError("object", "must be a JSON object")
    version = settings.semantics.version
    if request.operation is Operation.CREATE:
        new_raw = _dropped(prepare_create(new_raw), None, ("spec",), version)
        created = apply_job_defaults(decode_job(new_raw))
        return JobCreateContext(
            semantics=settings.semantics,
            new=created,
            new_json=JobJson(new_raw),
            new_state=JobState.of(created),
            requester=request.requester,
            namespace=request.namespace,
        )
    old_raw: Any = request.old_object
    if not isinstance(old_raw, dict):
        raise ObjectDecodeError("oldObject", "must be a JSON object for UPDATE")
    old_raw = prepare_stored(old_raw)
    status = request.subresource == "status"
    if status:
        new_raw = prepare_status_update(new_raw, old_raw)
    else:
        new_raw = _dropped(prepare_update(new_raw, old_raw), old_raw, ("spec",), version)
    new = apply_job_defaults(decode_job(new_raw))
    old = apply_job_defaults(_decode_old(old_raw, new_raw, new))
    new_state, old_state = JobState.of(new), JobState.of(old)
    context = JobStatusContext if status else JobUpdateContext
    return context(
        semantics=settings.semantics,
        new=new,
        new_json=JobJson(new_raw),
        new_state=new_state,
        old=old,
        old_json=JobJson(old_raw),
        old_state=old_state,
        transition=classify(old_state, new_state, old, new),
        requester=request.requester,
        namespace=request.namespace,
    )


def _dropped(
    raw: dict[str, Any], old_raw: dict[str, Any] | None, at: tuple[str, ...], version: str
) -> dict[str, Any]:
    """The object with its pod template (under `at` + "template") as the strategy's
    PrepareForCreate / PrepareForUpdate leaves it: DropDisabledTemplateFields against the
    stored template. The same object when nothing is dropped."""
    parents: list[dict[str, Any]] = [raw]
    for key in at:
        parent = parents[-1].get(key)
        if not isinstance(parent, dict):
            return raw
        parents.append(parent)
    template = parents[-1].get("template")
    old_template = member(old_raw, *at, "template")
    kept = drop_disabled_template_fields(template, old_template, version)
    if kept is template:
        return raw
    # Rebuild the path down to the template: the request's own maps stay as they were.
    rebuilt: dict[str, Any] = {**parents[-1], "template": kept}
    for key, above in zip(reversed(at), reversed(parents[:-1]), strict=True):
        rebuilt = {**above, key: rebuilt}
    return rebuilt


def _decode_old(old_raw: dict[str, Any], new_raw: dict[str, Any], new: Job) -> Job:
    """The old Job. A part the preparation copied into the new object (the spec of a status
    update, the status of an update) is the new Job's: the same JSON, not decoded twice."""
    shared = [
        key for key in ("spec", "status") if key in old_raw and new_raw.get(key) is old_raw[key]
    ]
    if not shared:
        return decode_job(old_raw, "oldObject")
    # The new Job's part itself: msgspec takes an instance of the field's Struct as it is.
    return decode_job({**old_raw, **{key: getattr(new, key) for key in shared}}, "oldObject")


def _job_spec_errors(
    ctx: JobContext, create: bool, opts: JobOptions, keep: bool = True
) -> list[FieldError]:
    """Upstream ValidateJobSpec: validateJobSpec (with ValidatePodTemplateSpec) plus the
    selector checks: a function of the spec (after the strategy's drop of disabled fields) and
    the request's options. Every update of a Job sends its spec again, mostly unchanged, so
    results are kept, keyed by the spec's JSON (in the order sent: the API server writes a Job's
    fields in one order, and sorting costs a third more) and the options. Not kept unless `keep`: `jobguard check` judges each manifest
    once, and its generated labels hold a uid of its own, so a key would cost a JSON dump and an
    entry for nothing."""

    version = ctx.semantics.version
    pod = opts.pod
    allow_invalid = opts.allow_invalid_label_value_in_selector

    def check(_: object = None) -> list[FieldError]:
        template = validate_pod_template_spec(
            ctx.new_json.template, "spec.template", pod, create=create, version=version
        )
        return validate_job_spec(
            ctx.new.spec, None, "spec", SpecOptions(defaulted=True, version=version), template
        ) + validate_job_spec_selector(ctx.new_json, None, "spec", allow_invalid, version)

    if not keep:
        return check()
    try:
        spec = orjson.dumps(ctx.new_json.spec)
    except TypeError:  # a value JSON cannot hold (a manifest's): judged, not kept
        return check()
    if len(spec) > MAX_KEPT_SPEC_BYTES:
        return check()
    return list(_JOB_SPEC_ERRORS.get_or_compute((spec, create, pod, allow_invalid), check))


_SpecKey = tuple[bytes, bool, PodOptions, bool]


def _from_key_alone(key: _SpecKey) -> list[FieldError]:
    raise LookupError("Job-spec errors are computed from the request: use get_or_compute")


MAX_KEPT_SPEC_BYTES = 256 * 1024
"""Larger specs are judged without being kept: orjson's bytes can hold up to twice or more their
length in memory (its buffer is not shrunk), which `sys.getsizeof` does not see, so only
specs far below the memo's budget are kept; a real Job's spec is a few KiB."""


def _errors_bytes(errors: list[FieldError]) -> int:
    """What a list of errors holds beyond its key: the errors, and the client's strings they
    quote (a 1 MiB container name is in its error as well as in the key)."""
    return sum(
        256 + len(e.path) + len(e.detail) + (len(e.value) if isinstance(e.value, str) else 0)
        for e in errors
    )


_JOB_SPEC_ERRORS: OwnedMemo[_SpecKey, list[FieldError]] = OwnedMemo(
    _from_key_alone, max_bytes=4 * 1024 * 1024, value_bytes=_errors_bytes
)


@dataclass(frozen=True, slots=True)
class _RequesterOptions:
    """What the policy rules (NE, SUS) need of a requester in a namespace: a function of the
    settings, the namespace and the requester alone."""

    exempt: bool
    exempt_beyond_controllers: bool
    """Exempt even from a policy's forced suspension (SUS-008): not only as a built-in
    controller."""
    suspend: SuspendOptions
    policy: PolicyOptions


class _RequesterMemo:
    """Requester options kept in the settings' caches (a reload makes new settings, and the
    entries start again). In a cluster the same few controllers and users write Jobs in a
    handful of namespaces, so nearly every request finds its requester here; cleared when full
    (by entries, or by the bytes of the names and groups) against a stream of new users."""

    max_entries = 1024
    max_bytes = 1024 * 1024

    def __init__(self) -> None:
        self.entries: dict[tuple[str, str, tuple[str, ...]], _RequesterOptions] = {}
        self.bytes = 0


def _requester_options(
    settings: Settings, namespace: str, requester: Requester
) -> _RequesterOptions:
    memo: _RequesterMemo = settings.caches.get(_RequesterMemo, _RequesterMemo)
    entries = memo.entries
    key = (namespace, requester.username, requester.groups)
    found = entries.get(key)
    if found is None:
        cost = 400 + len(namespace) + len(requester.username) + sum(map(len, requester.groups))
        if len(entries) >= memo.max_entries or memo.bytes + cost > memo.max_bytes:
            entries.clear()
            memo.bytes = 0
        found = _RequesterOptions(
            exempt=settings.policies.exemptions.exempt(namespace, requester),
            exempt_beyond_controllers=settings.policies.exemptions.exempt_beyond_controllers(
                namespace, requester
            ),
            suspend=suspend_options(
                requester,
                settings.params,
                settings.semantics,
                ne007_enabled=settings.enforcements["NE-007"] is not None,
            ),
            policy=policy_options(settings.policies, namespace, requester),
        )
        if cost <= memo.max_bytes:
            entries[key] = found
            memo.bytes += cost
    return found


def job_errors(ctx: JobContext, settings: Settings, *, manifest: bool = False) -> list[FieldError]:
    """Every rule's errors for a Job request, in the order the API server reports them
    (`manifest`: the request's, see `_job_spec_errors`)."""
    new, new_json = ctx.new, ctx.new_json
    if isinstance(ctx, JobStatusContext):
        # Upstream jobStatusStrategy.ValidateUpdate: ValidateJobUpdateStatus with the options.
        old, new_state, old_state = ctx.old, ctx.new_state, ctx.old_state
        uncounted = (new_json.uncounted_terminated_pods, ctx.old_json.uncounted_terminated_pods)
        status_opts = status_options(new, old, new_state, old_state, ctx.semantics, uncounted)
        errors = validate_object_meta_update(
            new_json.metadata, ctx.old_json.metadata, "metadata", with_syntax(ctx.semantics.version)
        )
        errors += validate_job_status(new, old, "status", status_opts)
        errors += validate_job_status_update(new, old, "status", status_opts)
        # Not upstream: suspend semantics of the status (never for exempt requesters).
        requester_opts = _requester_options(settings, ctx.namespace, ctx.requester)
        if not requester_opts.exempt:
            errors += check_suspend_status(new_state, old_state, "status", ctx.transition)
            # The status strategy stores the new labels: a relabel here moves the Job too.
            errors += check_policy_labels(new, old, "spec", requester_opts.policy)
        return errors
    # Upstream jobStrategy.Validate / ValidateUpdate: the options, then ValidateJobCreate or
    # ValidateJobUpdate (before 1.37, ValidateJob then ValidateJobUpdate on UPDATE).
    update = ctx if isinstance(ctx, JobUpdateContext) else None
    if update is not None:
        opts = job_options(new_json, update.old, update.old_json, update.old_state, ctx.semantics)
    else:
        opts = job_options(new_json, None, None, None, ctx.semantics)
    create = update is None
    job_spec = _job_spec_errors(ctx, create, opts, keep=not manifest)
    if update is not None and ctx.semantics.job_update_validated_once:
        # 1.37 ValidateJobUpdate: ValidateObjectMetaUpdate, ValidateJobSpecUpdate (the spec
        # once, the immutable fields, the pod template), validateNameAllowsCompletions.
        old_json = update.old_json
        errors = validate_object_meta_update(
            new_json.metadata, old_json.metadata, "metadata", with_syntax(ctx.semantics.version)
        )
        errors += job_spec
        errors += validate_job_spec_update(
            (update.new, new_json), (update.old, old_json), "spec", None
        )
        errors += validate_pod_template_update(new_json, old_json, "spec", opts)
        errors += validate_indexed_hostname(new, None, "metadata", None)
    else:
        # Upstream ValidateJob: metadata, generated selector, ValidateJobSpec, hostname.
        if create:
            errors = validate_object_meta_accessor(
                new.metadata, None, "metadata", NameOptions(ctx.namespace)
            )
        else:
            errors = []
        errors += validate_labels_and_annotations(
            new_json.metadata, None, "metadata", ctx.semantics.version
        )
        errors += validate_object_meta(new_json.metadata, None, "metadata", ctx.semantics.version)
        errors += validate_generated_selector(new_json, None, "spec", opts)
        errors += job_spec
        errors += validate_indexed_hostname(new, None, "metadata", None)
    if update is not None and not ctx.semantics.job_update_validated_once:
        old_json = update.old_json
        # Label syntax was judged with the create-style checks above.
        errors += validate_object_meta_update(
            new_json.metadata, old_json.metadata, "metadata", without_syntax(ctx.semantics.version)
        )
        # Upstream ValidateJobSpecUpdate: ValidateJobSpec a second time (the same errors
        # again, not computed twice), the immutable fields and the pod template.
        errors += job_spec
        errors += validate_job_spec_update(
            (update.new, new_json), (update.old, old_json), "spec", None
        )
        errors += validate_pod_template_update(new_json, old_json, "spec", opts)
    # Not upstream: suspend semantics, then suspend policies (never for exempt requesters).
    requester_opts = _requester_options(settings, ctx.namespace, ctx.requester)
    if requester_opts.exempt:
        # A built-in controller's CREATE still meets a policy's forced suspension: it acts for
        # others, and an unsuspended matched Job from it means /mutate did not suspend it.
        if update is None and not requester_opts.exempt_beyond_controllers:
            errors += check_forced_suspend_kept(new, None, "spec", requester_opts.policy)
        return errors
    ne_opts, sus_opts = requester_opts.suspend, requester_opts.policy
    if update is not None:
        change = update.transition
        errors += check_suspend_update(
            ctx.new_state, update.old_state, "spec", SuspendUpdateOptions(change, ne_opts)
        )
        errors += check_suspend_policy_update(
            new, update.old, "spec", PolicyUpdateOptions(change, sus_opts)
        )
    else:
        errors += check_suspend_policy_create(new, None, "spec", sus_opts)
    return errors


def _spec(raw: dict[str, Any] | None) -> dict[str, Any]:
    spec = raw.get("spec") if raw is not None else None
    return spec if isinstance(spec, dict) else {}


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def cronjob_errors(ctx: CronJobContext, namespace: str = "") -> list[FieldError]:
    """Every rule's errors for a CronJob request, in upstream's order (ValidateCronJobCreate,
    ValidateCronJobUpdate)."""
    create = ctx.operation is Operation.CREATE
    if create:
        errors = validate_object_meta_accessor(
            ctx.new.metadata, None, "metadata", NameOptions(namespace)
        )
        metadata = _dict(ctx.new_raw.get("metadata"))
        errors += validate_labels_and_annotations(metadata, None, "metadata", ctx.semantics.version)
        errors += validate_object_meta(metadata, None, "metadata", ctx.semantics.version)
    else:
        errors = validate_object_meta_update(
            _dict(ctx.new_raw.get("metadata")),
            _dict((ctx.old_raw or {}).get("metadata")),
            "metadata",
            with_syntax(ctx.semantics.version),
        )
    spec = _spec(ctx.new_raw)
    old_spec = None if create else _spec(ctx.old_raw)
    errors += validate_cronjob_spec_head(spec, old_spec, "spec", None)
    template = _spec(_dict(spec.get("jobTemplate"))).get("template")
    old_template = (
        None if old_spec is None else _spec(_dict(old_spec.get("jobTemplate"))).get("template")
    )
    # Upstream cronJobStrategy: GetValidationOptionsFromPodTemplate(new, old).
    pod = get_validation_options_from_pod_template(
        _dict(template), None if create else _dict(old_template), ctx.semantics.version
    )
    template_errors = validate_pod_template_spec(
        template,
        "spec.jobTemplate.spec.template",
        pod,
        create=create,
        version=ctx.semantics.version,
    )
    errors += validate_job_template_spec(
        ctx.new, None, "spec", ctx.semantics.version, template_errors
    )
    errors += validate_cronjob_spec_tail(spec, None, "spec", None)
    if create:
        errors += validate_cron_job_create(ctx.new.metadata, None, "metadata", None)
    return errors


def resolve_violations(errors: list[FieldError], settings: Settings) -> list[Violation]:
    """The errors of enabled rules, each with its rule's configured enforcement."""
    out: list[Violation] = []
    enforcements = settings.enforcements
    # Errors come in runs of one rule (250,000 ST-006 duplicates): resolved once per run.
    for rule, run in groupby(errors, _RULE):
        enforcement = enforcements[rule]
        if enforcement is not None:
            out += map(Violation, run, repeat(enforcement))
    return out


def evaluate(request: Request, settings: Settings) -> Verdict:
    """Judge one request. Never raises for bad objects: they give a Verdict with decode_error.
    What the checks keep is kept in the settings' caches."""
    token = ACTIVE_CACHES.set(settings.caches)  # not `caching`: no generator per request
    try:
        return _evaluate(request, settings)
    finally:
        ACTIVE_CACHES.reset(token)


def _evaluate(request: Request, settings: Settings) -> Verdict:
    name = _name_of(request.object, request.name)
    judged = request.kind in JUDGED_KINDS and request.operation in (
        Operation.CREATE,
        Operation.UPDATE,
    )
    if request.kind == "CronJob" and request.subresource:
        judged = False
    if request.kind == "Job" and request.subresource not in ("", "status"):
        judged = False
    if request.subresource == "status" and request.operation is not Operation.UPDATE:
        judged = False
    if not judged:
        return Verdict(request.kind, name, judged=False)
    if request.unreadable is not None:
        return _unreadable(request.kind, name, request.unreadable, settings)
    try:
        if request.kind == "Job":
            ctx: JobContext | CronJobContext = _job_context(request, settings)
            assert isinstance(ctx, JobContext)
            errors = job_errors(ctx, settings, manifest=request.manifest)
        else:
            cron_ctx = _cronjob_context(request, settings)
            ctx = cron_ctx
            errors = cronjob_errors(cron_ctx, request.namespace)
            # Not upstream: what becomes of the Jobs it creates under a suspend policy.
            opts = policy_options(settings.policies, request.namespace, request.requester)
            errors += check_cronjob_policy(cron_ctx.new, None, "spec", opts)
    except ObjectDecodeError as exc:
        # A manifest's other wrongly typed fields, beyond the ones the decoder reads, are
        # reported at once too.
        schema = _schema_errors(request, settings) if request.manifest else []
        return _unreadable(request.kind, name, exc, settings, schema)
    except RecursionError:
        # Only reachable off-cluster: the API server drops the unknown fields that nest so deep.
        error = ObjectDecodeError("object", "is nested too deeply to be judged")
        return _unreadable(request.kind, name, error, settings)
    if request.manifest:
        # Decoding a manifest comes first (docs/RULES.md, "OpenAPI schema (SC)").
        schema_opts = SchemaOptions(request.kind, settings.semantics.version)
        errors = check_schema(request.object, None, "object", schema_opts) + errors
    return Verdict(
        request.kind,
        name,
        judged=True,
        violations=resolve_violations(errors, settings),
        context=ctx,
    )


def _unreadable(
    kind: str,
    name: str,
    exc: ObjectDecodeError,
    settings: Settings,
    schema: list[FieldError] | None = None,
) -> Verdict:
    """DEC-001 for an object that cannot be read (one error per offending field), enforced
    (or not) as configured; then the schema errors of a manifest at other fields."""
    errors = [_decode_field_error(p) for p in exc.problems] or [
        unreadable(DECODE_RULE, exc.field, exc.reason)
    ]
    named = {e.path for e in errors}
    errors += [e for e in schema or [] if e.path not in named]
    violations = resolve_violations(errors, settings)
    return Verdict(kind, name, judged=True, violations=violations, decode_error=exc)


def _decode_field_error(problem: DecodeProblem) -> FieldError:
    kind = ErrorType.TYPE_INVALID if problem.type_error else ErrorType.INVALID
    return FieldError(DECODE_RULE, problem.field, kind, problem.detail, problem.value)


def _schema_errors(request: Request, settings: Settings) -> list[FieldError]:
    try:
        schema = SchemaOptions(request.kind, settings.semantics.version)
        return check_schema(request.object, None, "object", schema)
    except RecursionError:
        return []


def _cronjob_context(request: Request, settings: Settings) -> CronJobContext:
    new_raw = request.object
    if not isinstance(new_raw, dict):
        raise ObjectDecodeError("object", "must be a JSON object")
    old_raw = request.old_object if request.operation is Operation.UPDATE else None
    if isinstance(old_raw, dict):
        new_raw = prepare_cronjob_update(new_raw, old_raw)
    # cronJobStrategy: DropDisabledTemplateFields on the Job template's pod template.
    stored = old_raw if isinstance(old_raw, dict) else None
    new_raw = _dropped(new_raw, stored, ("spec", "jobTemplate", "spec"), settings.semantics.version)
    new = decode_cronjob(new_raw)
    old = decode_cronjob(old_raw, "oldObject") if isinstance(old_raw, dict) else None
    return CronJobContext(
        semantics=settings.semantics,
        operation=request.operation,
        new=new,
        new_raw=new_raw,
        old=old,
        old_raw=old_raw if isinstance(old_raw, dict) else None,
    )


@dataclass(frozen=True, slots=True)
class Mutation:
    """What the mutating webhook does: force `spec.suspend: true`, or nothing."""

    policy: SuspendPolicy | None
    has_spec: bool = True

    @property
    def patch(self) -> list[dict[str, Any]]:
        """RFC 6902 operations ("add" replaces an existing member)."""
        if self.policy is None:
            return []
        if self.has_spec:
            return [{"op": "add", "path": "/spec/suspend", "value": True}]
        return [{"op": "add", "path": "/spec", "value": {"suspend": True}}]

    def apply(self, obj: dict[str, Any]) -> dict[str, Any]:
        """The object with the patch applied (a copy; the input is left alone)."""
        if self.policy is None:
            return obj
        spec = obj.get("spec")
        return {**obj, "spec": {**(spec if isinstance(spec, dict) else {}), "suspend": True}}


def mutate(request: Request, settings: Settings) -> Mutation:
    """The mutation for a request; objects that cannot be read are left to /validate."""
    token = ACTIVE_CACHES.set(settings.caches)
    try:
        return _mutate(request, settings)
    finally:
        ACTIVE_CACHES.reset(token)


def _mutate(request: Request, settings: Settings) -> Mutation:
    if (
        request.kind != "Job"
        or request.operation is not Operation.CREATE
        or request.subresource
        or not any(p.force_suspend_on_create for p in settings.policies.policies)
        or request.unreadable is not None
    ):
        return Mutation(None)
    try:
        ctx = _job_context(request, settings)
    except (ObjectDecodeError, RecursionError):
        return Mutation(None)
    policy = needs_forced_suspend(
        ctx.new, policy_options(settings.policies, ctx.namespace, ctx.requester)
    )
    raw = request.object
    has_spec = isinstance(raw, dict) and isinstance(raw.get("spec"), dict)
    return Mutation(policy, has_spec)
