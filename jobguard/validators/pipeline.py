"""The one judgement pipeline every entry point uses (webhook, `jobguard review`, CI checks).

request -> prepare (replay the API server) -> decode (typed, strict) -> lifecycle model ->
rule checks in upstream order -> resolved per configured rule -> Verdict.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from jobguard.validators.catalog import Enforcement
from jobguard.validators.context import CronJobContext, JobContext, Operation, Request
from jobguard.validators.errors import OMITTED, FieldError, render_value
from jobguard.validators.lifecycle import JobState, classify
from jobguard.validators.model import ObjectDecodeError, decode_cronjob, decode_job
from jobguard.validators.policy import SuspendPolicy
from jobguard.validators.prepare import (
    apply_job_defaults,
    prepare_create,
    prepare_status_update,
    prepare_stored,
    prepare_update,
)
from jobguard.validators.rules.cronjob import check_cronjob
from jobguard.validators.rules.jobs import (
    check_generated_selector,
    check_immutable_fields,
    check_selector,
    check_template_update,
)
from jobguard.validators.rules.jobspec import check_indexed_hostname, check_job_spec
from jobguard.validators.rules.metadata import check_labels_and_annotations, check_metadata_update
from jobguard.validators.rules.status import check_status
from jobguard.validators.rules.suspend import check_suspend_status, check_suspend_update
from jobguard.validators.rules.suspend_policy import check_suspend_policies, needs_forced_suspend
from jobguard.validators.settings import Settings

JUDGED_KINDS = ("Job", "CronJob")


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
    context: JobContext | CronJobContext | None = None

    @property
    def denials(self) -> list[Violation]:
        return [v for v in self.violations if v.enforcement is Enforcement.DENY]

    @property
    def allowed(self) -> bool:
        return self.decode_error is None and not self.denials

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
    old_raw: Any = request.old_object
    if not isinstance(new_raw, dict):
        raise ObjectDecodeError("object", "must be a JSON object")
    if request.operation is Operation.CREATE:
        new_raw = prepare_create(new_raw)
        old_raw = None
    else:
        if not isinstance(old_raw, dict):
            raise ObjectDecodeError("oldObject", "must be a JSON object for UPDATE")
        old_raw = prepare_stored(old_raw)
        if request.subresource == "status":
            new_raw = prepare_status_update(new_raw, old_raw)
        else:
            new_raw = prepare_update(new_raw, old_raw)
    new = apply_job_defaults(decode_job(new_raw))
    old = apply_job_defaults(decode_job(old_raw, "oldObject")) if old_raw is not None else None
    new_state = JobState.of(new)
    old_state = JobState.of(old) if old is not None else None
    return JobContext(
        semantics=settings.semantics,
        operation=request.operation,
        subresource=request.subresource,
        new=new,
        new_raw=new_raw,
        new_state=new_state,
        old=old,
        old_raw=old_raw,
        old_state=old_state,
        transition=classify(old_state, new_state, old, new),
        requester=request.requester,
        namespace=request.namespace or new.metadata.namespace or "",
    )


def job_errors(ctx: JobContext, settings: Settings) -> list[FieldError]:
    """Every rule's errors for a Job request, in the order the API server reports them."""
    assert ctx.operation in (Operation.CREATE, Operation.UPDATE)
    if ctx.is_status:
        assert ctx.old_raw is not None
        errors = check_metadata_update(_meta(ctx.new_raw), _meta(ctx.old_raw))
        errors += check_status(ctx)
        errors += check_suspend_status(ctx)
        return errors
    raw_spec = ctx.new_raw.get("spec")
    # Upstream ValidateJobSpec: validateJobSpec plus the selector checks.
    job_spec = check_job_spec(
        ctx.new.spec, raw_spec if isinstance(raw_spec, dict) else {}, "spec"
    ) + check_selector(ctx)
    # Upstream ValidateJob: metadata, generated selector, ValidateJobSpec, hostname.
    errors = check_labels_and_annotations(_meta(ctx.new_raw), "metadata")
    errors += check_generated_selector(ctx)
    errors += job_spec
    errors += check_indexed_hostname(ctx.new.metadata.name or "", ctx.new.spec)
    if ctx.operation is Operation.UPDATE:
        assert ctx.old_raw is not None
        # Label syntax was judged with the create-style checks above.
        errors += check_metadata_update(_meta(ctx.new_raw), _meta(ctx.old_raw), syntax=False)
        # Upstream's ValidateJobSpecUpdate runs ValidateJobSpec a second time: the same
        # errors again (deterministic, so not computed twice).
        errors += job_spec
        errors += check_immutable_fields(ctx)
        errors += check_template_update(ctx)
    errors += check_suspend_update(ctx, settings.params)
    errors += check_suspend_policies(ctx, settings.policies, ctx.namespace)
    return errors


def _meta(raw: dict[str, Any]) -> dict[str, Any]:
    metadata = raw.get("metadata")
    return metadata if isinstance(metadata, dict) else {}


def _resolve(errors: list[FieldError], settings: Settings) -> list[Violation]:
    out = []
    for error in errors:
        rule = settings.rule(error.rule)
        if rule.enabled:
            out.append(Violation(error, rule.enforcement))
    return out


def evaluate(request: Request, settings: Settings) -> Verdict:
    """Judge one request. Never raises for bad objects: they give a Verdict with decode_error."""
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
    try:
        if request.kind == "Job":
            ctx: JobContext | CronJobContext = _job_context(request, settings)
            assert isinstance(ctx, JobContext)
            errors = job_errors(ctx, settings)
        else:
            cron_ctx = _cronjob_context(request, settings)
            ctx = cron_ctx
            errors = check_cronjob(cron_ctx)
    except ObjectDecodeError as exc:
        return Verdict(request.kind, name, judged=True, decode_error=exc)
    except RecursionError:
        # Only reachable off-cluster: the API server drops the unknown fields that nest so deep.
        error = ObjectDecodeError("object", "is nested too deeply to be judged")
        return Verdict(request.kind, name, judged=True, decode_error=error)
    return Verdict(
        request.kind, name, judged=True, violations=_resolve(errors, settings), context=ctx
    )


def _cronjob_context(request: Request, settings: Settings) -> CronJobContext:
    new_raw = request.object
    if not isinstance(new_raw, dict):
        raise ObjectDecodeError("object", "must be a JSON object")
    old_raw = request.old_object if request.operation is Operation.UPDATE else None
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
    if (
        request.kind != "Job"
        or request.operation is not Operation.CREATE
        or request.subresource
        or not any(p.force_suspend_on_create for p in settings.policies.policies)
    ):
        return Mutation(None)
    try:
        ctx = _job_context(request, settings)
    except ObjectDecodeError:
        return Mutation(None)
    policy = needs_forced_suspend(ctx, settings.policies, ctx.namespace)
    raw = request.object
    has_spec = isinstance(raw, dict) and isinstance(raw.get("spec"), dict)
    return Mutation(policy, has_spec)
