"""The AdmissionReview wire contract: body -> validators.Request, Admission -> response body.

Only shape handling lives here; every decision comes from the admission chain
(`validators.admit`). `handle_validate` and `handle_mutate` are the entry points: the server and
`jobguard review` call them with the raw body.
"""

from __future__ import annotations

import base64
import dataclasses
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from operator import attrgetter
from typing import Any, Literal, get_args

import msgspec
import orjson

from jobguard.app.admission import envelope as mutation_envelope
from jobguard.app.admission import exact_json as jsonfallback
from jobguard.app.admission.types import (
    AdmissionReview,
    Cause,
    ErrorBody,
    ResponsePayload,
    ReviewResponse,
    ReviewVersion,
    Status,
    UserInfo,
)
from jobguard.validators import (
    RULES_BY_ID,
    Enforcement,
    Operation,
    Request,
    Requester,
    Settings,
    Stage,
    Verdict,
    Violation,
    admit,
)
from jobguard.validators.errors import MoreErrors
from jobguard.validators.model import ObjectDecodeError
from jobguard.validators.pipeline import DECODE_RULE

log = logging.getLogger("jobguard.admission")

REVIEW_VERSIONS: tuple[ReviewVersion, ...] = get_args(ReviewVersion)
_VERSIONS: dict[str, ReviewVersion] = {v: v for v in REVIEW_VERSIONS}
RESOURCE_KINDS = {"jobs": "Job", "cronjobs": "CronJob"}
_OPERATIONS = {operation.value: operation for operation in Operation}
_convert = msgspec.convert
# kubectl prints each warning on one line; the Kubernetes docs advise at most 120 characters.
MAX_WARNING_CHARS = 120

LOW_MEMORY_PARSE_BYTES = 1024 * 1024
"""Bodies larger than this are read by jsonfallback.loads_large (same values, less than half the
memory at 4.8 MiB; as fast on the string-heavy bodies that get this large)."""

MAX_CONTAINERS = 500_000
"""At most this many JSON objects and arrays in a large body (`structures`: brackets inside
strings do not count): an empty one costs 56-64 bytes decoded, so a 7 MiB body of `{},{},...`
would take 150 MiB. A Job's whole object, managedFields included, has a few thousand."""

_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
"""A JSON string, escapes included (linear: no nested repetition to backtrack into)."""


def structures(body: bytes, limit: int) -> int:
    """The JSON objects and arrays in `body` (its `{` and `[` outside strings), exact once the
    brackets counted in C exceed `limit` (below it, an upper bound: strings may hold some).

    Beyond the limit, the brackets inside each string are taken away, a string at a time (its
    brackets counted in C): work grows with the strings, so a body with few of them, such as one
    whose container args hold 500,001 `[`, is counted in microseconds."""
    count = body.count(b"{") + body.count(b"[")
    if count <= limit:
        return count
    for match in _STRING.finditer(body):
        start, end = match.span()
        count -= body.count(b"{", start, end) + body.count(b"[", start, end)
    return count


Result = Literal["allowed", "denied", "bad_request", "error"]
"""What one webhook call did, for metrics and logs."""


class BadReview(ValueError):
    """A body that is not a usable AdmissionReview (answered with HTTP 400)."""


# ParsedReview and Outcome are not frozen: one of each per review, and a frozen dataclass's
# __init__ costs five times a plain one's. Nothing changes them once built.
@dataclass(slots=True)
class ParsedReview:
    api_version: ReviewVersion
    uid: str
    request: Request
    resource: str
    """`request.resource.resource` as sent (metrics label it only when known)."""


_REQUESTERS: dict[tuple[str, tuple[str, ...]], Requester] = {}
"""Requesters already read (a cluster's writers are a few controllers and users), so that one
is not built for every review: at most MAX_REQUESTERS (then emptied) of at most
MAX_REQUESTER_CHARS characters each, so clients cannot fill memory with names."""
MAX_REQUESTERS = 1024
MAX_REQUESTER_CHARS = 4096
_NOBODY = Requester()


def _requester(info: UserInfo | None) -> Requester:
    if info is None:
        return _NOBODY
    username = info.username or ""
    groups = info.groups or ()
    key = (username, tuple(groups))
    known = _REQUESTERS.get(key)
    if known is not None:
        return known
    requester = Requester(username, key[1])
    # A group counts a character at least: it holds a place in the tuple however short.
    if len(username) + len(groups) + sum(map(len, groups)) <= MAX_REQUESTER_CHARS:
        if len(_REQUESTERS) >= MAX_REQUESTERS:
            _REQUESTERS.clear()
        _REQUESTERS[key] = requester
    return requester


def parse_review(body: bytes) -> ParsedReview:
    """Read an AdmissionReview body, or raise BadReview with a one-line reason.

    Only the review is checked here (JSON, apiVersion, kind, uid and the fields of `request`
    that jobguard reads, decoded into `types.AdmissionReview` by `_review_of`); the object inside
    is the chain's to judge.
    """
    unreadable = None
    if len(body) > LOW_MEMORY_PARSE_BYTES:
        containers = structures(body, MAX_CONTAINERS)
        if containers > MAX_CONTAINERS:
            raise BadReview(
                f"body has more than {MAX_CONTAINERS} JSON objects and arrays ({containers}): "
                "not an object the API server sends"
            )
        data, unreadable = _large_loads(body)
    else:
        try:
            data = orjson.loads(body)
        except orjson.JSONDecodeError as exc:
            data, unreadable = _fallback_loads(body, exc)
    return _review_of(data, unreadable)


def parse_mutation_review(body: bytes) -> ParsedReview:
    """`parse_review` for /mutate. A large body (over LOW_MEMORY_PARSE_BYTES) is read with only
    what the mutating webhook reads of its object (jobguard.app.admission.envelope), so its size or
    structure elsewhere is never refused nor built; one that cannot be read that way (not
    JSON, a part that should be an object and is not, values orjson refuses) and every smaller
    body are read by `parse_review`, as /validate reads them."""
    if len(body) <= LOW_MEMORY_PARSE_BYTES:
        return parse_review(body)
    try:
        data = mutation_envelope.decode(body)
    except mutation_envelope.NOT_READ:
        return parse_review(body)
    return _review_of(data, None)


_WRONG_USER_INFO = "request.userInfo has a username or groups of the wrong type"
_WRONG_RESOURCE = "request.resource fields must be strings"
_REASONS = {
    "$": "body must be a JSON object (an AdmissionReview)",
    "$.request": "AdmissionReview has no request object",
    "$.request.uid": "request.uid is missing or not a string",
    "$.request.resource": "request.resource must be an object",
    "$.request.resource.group": _WRONG_RESOURCE,
    "$.request.resource.version": _WRONG_RESOURCE,
    "$.request.resource.resource": _WRONG_RESOURCE,
    "$.request.userInfo": "request.userInfo must be an object",
    "$.request.userInfo.username": _WRONG_USER_INFO,
    "$.request.userInfo.groups": _WRONG_USER_INFO,
    "$.request.dryRun": "request.dryRun must be a boolean",
}
"""The reason for a field of the wrong type, by its path in msgspec's error (list indexes
taken away); the other strings of `request` read "request.<field> must be a string"."""
_AT = " - at `"


def _wrong_type(exc: msgspec.ValidationError, data: Any) -> BadReview:
    """The one-line reason for a review whose field has the wrong type."""
    text = str(exc)
    at = text.rfind(_AT)
    path = re.sub(r"\[\d+\]", "", text[at + len(_AT) : -1]) if at >= 0 else "$"
    if path == "$.apiVersion":
        return _bad_version(data.get("apiVersion"))
    if path == "$.kind":
        return _bad_kind(data.get("kind"))
    reason = _REASONS.get(path)
    if reason is None:
        reason = f"{path.removeprefix('$.')} must be a string"
    return BadReview(reason)


def _bad_version(sent: Any) -> BadReview:
    return BadReview(f"apiVersion must be one of {', '.join(REVIEW_VERSIONS)}, got {sent!r}")


def _bad_kind(sent: Any) -> BadReview:
    return BadReview(f"kind must be AdmissionReview, got {sent!r}")


def _review_of(data: Any, unreadable: ObjectDecodeError | None) -> ParsedReview:
    """The decoded body as a typed AdmissionReview (`types.AdmissionReview`: the one decoder of
    every body, whichever reader decoded its JSON), then the checks of its values."""
    try:
        review = _convert(data, AdmissionReview)
    except msgspec.ValidationError as exc:
        raise _wrong_type(exc, data) from None
    api_version = _VERSIONS.get(review.api_version or "")
    if api_version is None:
        raise _bad_version(review.api_version)
    if review.kind != "AdmissionReview":
        raise _bad_kind(review.kind)
    request = review.request
    if request is None:
        raise BadReview(_REASONS["$.request"])
    uid = request.uid
    if not uid:
        raise BadReview(_REASONS["$.request.uid"])
    operation = _OPERATIONS.get(request.operation or "")
    if operation is None:
        raise BadReview(
            "request.operation must be CREATE, UPDATE, DELETE or CONNECT, "
            f"got {request.operation or ''!r}"
        )
    gvr = request.resource
    if gvr is None:
        group = version = resource = ""
    else:
        group, version, resource = gvr.group or "", gvr.version or "", gvr.resource or ""
    kind = RESOURCE_KINDS.get(resource, "") if (group, version) == ("batch", "v1") else ""
    parsed_request = Request(
        kind=kind or f"{group}/{version}/{resource}",
        operation=operation,
        object=request.object,
        old_object=request.old_object,
        subresource=request.sub_resource or "",
        namespace=request.namespace or "",
        name=request.name or "",
        requester=_requester(request.user_info),
        dry_run=request.dry_run is True,
        unreadable=unreadable,
    )
    return ParsedReview(api_version, uid, parsed_request, resource)


def _large_loads(body: bytes) -> tuple[Any, ObjectDecodeError | None]:
    """A large body read as orjson reads it, without orjson's buffer (see jsonfallback)."""
    try:
        data, unreadable = jsonfallback.loads_large(body)
    except (ValueError, RecursionError) as exc:
        raise BadReview(f"body is not valid JSON: {str(exc).splitlines()[0]}") from None
    return data, _decode_error(unreadable)


def _decode_error(unreadable: jsonfallback.UnreadableValue | None) -> ObjectDecodeError | None:
    if unreadable is None:
        return None
    return ObjectDecodeError(jsonfallback.field_path(unreadable.location), unreadable.reason)


def _fallback_loads(
    body: bytes, error: orjson.JSONDecodeError
) -> tuple[Any, ObjectDecodeError | None]:
    """Read what orjson refuses (an integer beyond 64 bits, a lone surrogate) with the exact
    decoder (see jsonfallback); the value it cannot judge becomes a DEC-001 of its field. A body
    that is not JSON at all is a BadReview."""
    try:
        data, unreadable = jsonfallback.loads(body)
    except (ValueError, RecursionError):
        raise BadReview(f"body is not valid JSON: {str(error).splitlines()[0]}") from None
    return data, _decode_error(unreadable)


def _aggregate(messages: list[str]) -> str:
    unique = list(dict.fromkeys(messages))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


def _status(
    kind: str,
    name: str,
    code: int,
    reason: Literal["Invalid", "Forbidden", "BadRequest"],
    message: str,
    causes: list[Cause],
) -> Status:
    """A metav1.Status with details, the shape the API server uses for errors on an object."""
    return {
        "status": "Failure",
        "message": message,
        "reason": reason,
        "details": {"name": name, "group": "batch", "kind": kind, "causes": causes},
        "code": code,
    }


def invalid_status(kind: str, name: str, denials: list[Violation]) -> Status:
    """The metav1.Status the API server returns for an invalid object (NewInvalid)."""
    errors = [v.error for v in denials]
    bodies = [e.body() for e in errors]  # rendered once: for the message and the cause
    message = f'{kind}.batch "{name}" is invalid: ' + _aggregate(
        [f"{e.path}: {body}" for e, body in zip(errors, bodies, strict=True)]
    )
    causes: list[Cause] = [
        {"reason": e.type.reason, "message": body, "field": e.path}
        for e, body in zip(errors, bodies, strict=True)
    ]
    return _status(kind, name, 422, "Invalid", message, causes)


def forbidden_status(kind: str, name: str, denials: list[Violation]) -> Status:
    """A 403 for policy denials: each line names the rule, the field and what to do instead."""
    errors = [v.error for v in denials]
    bodies = [e.body() for e in errors]
    message = f'{kind}.batch "{name}" is forbidden: ' + _aggregate(
        [f"{e.rule} {e.path}: {body}" for e, body in zip(errors, bodies, strict=True)]
    )
    causes: list[Cause] = [
        {"reason": e.type.reason, "message": f"{e.rule}: {body}", "field": e.path}
        for e, body in zip(errors, bodies, strict=True)
    ]
    return _status(kind, name, 403, "Forbidden", message, causes)


def unreadable_status(kind: str, name: str, denials: list[Violation]) -> Status:
    """A 400 for an object that cannot be read as its kind (DEC-001): every offending field,
    one cause each, with the API server's wording."""
    errors = [v.error for v in denials]
    message = f'{kind}.batch "{name}" could not be read: ' + _aggregate(
        [e.message() if e.path else e.body() for e in errors]
    )
    causes: list[Cause] = [
        {"reason": e.type.reason, "message": e.body(), "field": e.path} for e in errors
    ]
    return _status(kind, name, 400, "BadRequest", message, causes)


_CONTROL = {c: f"\\x{c:02x}" for c in [*range(32), 127]}


def _warning(v: Violation) -> str:
    # The API server silently drops warnings with control characters: escape them.
    text = f"{v.error.rule} {v.error.path}: {v.error.detail or v.error.body()}".translate(_CONTROL)
    return text if len(text) <= MAX_WARNING_CHARS else text[: MAX_WARNING_CHARS - 3] + "..."


def response_for(uid: str, verdict: Verdict) -> ResponsePayload:
    """The AdmissionResponse for a verdict."""
    response: ResponsePayload = {"uid": uid, "allowed": verdict.allowed}
    denials = verdict.denials
    if denials and verdict.decode_error is not None:
        # DEC-001 denied: a bad request rather than an invalid object. A manifest's schema
        # errors may come with it (`jobguard check` only); the answer names the decode errors.
        decode = [v for v in denials if v.error.rule == DECODE_RULE]
        if decode:
            response["status"] = unreadable_status(verdict.kind, verdict.name, decode)
            return response
    if denials:
        # Upstream rules answer like the API server (422 Invalid); policy-only denials are 403.
        if any(RULES_BY_ID[v.error.rule].upstream for v in denials):
            response["status"] = invalid_status(verdict.kind, verdict.name, denials)
        else:
            response["status"] = forbidden_status(verdict.kind, verdict.name, denials)
    if not verdict.violations:
        return response
    # Once: the warnings and dry runs are among them. A single violation is its own unique list.
    fired = verdict.violations if len(verdict.violations) == 1 else verdict.unique()
    warnings = [_warning(v) for v in fired if v.enforcement is Enforcement.WARN]
    if warnings:
        response["warnings"] = warnings
    response["auditAnnotations"] = {
        "violations": ",".join(
            dict.fromkeys(f"{v.error.rule}={v.enforcement.value}" for v in fired)
        )
    }
    for v in fired:
        if v.enforcement is Enforcement.DRYRUN:
            # Rule and field only: values can hold secrets (env values in templates).
            log.info("dryrun violation %s %s", v.error.rule, v.error.path)
    return response


# Bounds on an answer: a body under the size cap can hold 250,000 errors (a UID list), and a
# 1 MiB label key is echoed in its error. The first causes and warnings are shown, the last
# saying how many more there were, and every text is cut, so no answer exceeds about 1 MiB.
MAX_CAUSES = 100
MAX_VALUE_CHARS = 256
MAX_CAUSE_CHARS = 1024
MAX_MESSAGE_CHARS = 32 * 1024

_ENFORCEMENTS = tuple(Enforcement)
RULE_AND_ENFORCEMENT = attrgetter("error.rule", "enforcement")
"""(rule ID, enforcement) of a Violation, read in C."""


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _shortened(violation: Violation) -> Violation:
    error = violation.error
    if isinstance(error.value, str) and len(error.value) > MAX_VALUE_CHARS:
        error = dataclasses.replace(error, value=_cut(error.value, MAX_VALUE_CHARS))
    return violation if error is violation.error else Violation(error, violation.enforcement)


@dataclass(slots=True)  # not frozen: built for every denial (see ParsedReview)
class Bounded:
    """A verdict with at most MAX_CAUSES - 1 violations of each enforcement (the answer is built
    from it) and how many denials and warnings were left out."""

    verdict: Verdict
    full: Verdict
    hidden_denials: int = 0
    hidden_warnings: int = 0

    def finish(self, response: ResponsePayload) -> None:
        """Say how many were left out, name every rule that fired, cut every text."""
        annotations = response.get("auditAnnotations")
        if self.verdict is not self.full and annotations is not None:
            fired = dict.fromkeys(map(RULE_AND_ENFORCEMENT, self.full.violations))
            annotations["violations"] = ",".join(f"{rule}={how.value}" for rule, how in fired)
        status = response.get("status")
        if status is not None:
            causes = status["details"]["causes"]
            message = status["message"]
            if self.hidden_denials:
                more = f"{self.hidden_denials} more errors"
                causes.append({"reason": "FieldValueTooMany", "message": more, "field": ""})
                message = f"{message} (and {more})"
            status["message"] = _cut(message, MAX_MESSAGE_CHARS)
            for cause in causes:
                cause["message"] = _cut(cause["message"], MAX_CAUSE_CHARS)
                cause["field"] = _cut(cause["field"], MAX_CAUSE_CHARS)
        warnings = response.get("warnings")
        if self.hidden_warnings and warnings is not None:
            warnings.append(f"and {self.hidden_warnings} more warnings")


def bounded(verdict: Verdict) -> Bounded:
    """The verdict cut for answering (see Bounded); cheap when nothing needs cutting."""
    if len(verdict.violations) < MAX_CAUSES and not any(
        isinstance(v.error.value, str) and len(v.error.value) > MAX_VALUE_CHARS
        for v in verdict.violations
    ):
        return Bounded(verdict, verdict)
    kept: list[Violation] = []
    counts = dict.fromkeys(_ENFORCEMENTS, 0)
    for violation in verdict.violations:
        listable = not isinstance(violation.error, MoreErrors)  # counted, never a cause
        if counts[violation.enforcement] < MAX_CAUSES - 1 and listable:
            kept.append(_shortened(violation))
        counts[violation.enforcement] += violation.error.stands_for
    if len(kept) == len(verdict.violations) and all(
        k is v for k, v in zip(kept, verdict.violations, strict=True)
    ):
        return Bounded(verdict, verdict)
    shown = dataclasses.replace(verdict, violations=kept)
    hidden_warnings = 0
    if counts[Enforcement.WARN] >= MAX_CAUSES:  # warnings are unique: count the unique ones
        hidden_warnings = sum(v.error.stands_for for v in verdict.unique(Enforcement.WARN)) - len(
            shown.unique(Enforcement.WARN)
        )
    return Bounded(shown, verdict, counts[Enforcement.DENY] - len(shown.denials), hidden_warnings)


def envelope(parsed: ParsedReview, response: ResponsePayload) -> ReviewResponse:
    """The answering AdmissionReview, in the version the request came in."""
    return {"apiVersion": parsed.api_version, "kind": "AdmissionReview", "response": response}


def mutation_response(parsed: ParsedReview, settings: Settings) -> ReviewResponse:
    """The mutating webhook's answer: allowed, with a JSONPatch forcing spec.suspend or none."""
    mutation = admit(parsed.request, settings, Stage.MUTATING).mutation
    response: ResponsePayload = {"uid": parsed.uid, "allowed": True}
    if mutation.policy is not None:
        response["patchType"] = "JSONPatch"
        response["patch"] = base64.b64encode(orjson.dumps(mutation.patch)).decode()
        response["auditAnnotations"] = {"mutation": f"suspended by policy {mutation.policy.name}"}
        response["warnings"] = [
            f"spec.suspend set to true by policy '{mutation.policy.name}': "
            "the queue controller resumes the Job"
        ]
    return envelope(parsed, response)


@dataclass(slots=True)
class Outcome:
    """What one webhook call did: the HTTP answer and, for logs and metrics, what it judged."""

    result: Result
    review: ReviewResponse | None = None
    """The answering AdmissionReview (HTTP 200)."""
    error: str | None = None
    """Why the body is not a usable AdmissionReview (HTTP 400)."""
    parsed: ParsedReview | None = None
    verdict: Verdict | None = None
    patched: bool = False

    @property
    def status(self) -> int:
        return 200 if self.review is not None else 400

    @property
    def payload(self) -> ReviewResponse | ErrorBody:
        """The HTTP body."""
        if self.review is not None:
            return self.review
        return {"error": self.error or ""}


def handle_validate(body: bytes, settings: Settings, stages: Stage = Stage.VALIDATING) -> Outcome:
    """/validate: the Outcome for a raw body. Never raises. With BOTH_STAGES (`review
    --mutate-first`), jobguard's own mutation is applied first, as the API server applies
    /mutate's patch before it calls /validate (`Outcome.patched` says whether it did).

    Two kinds of bad input, two answers. A body that is not a usable AdmissionReview (not JSON,
    no request uid, a wrongly typed request field) gets HTTP 400 `{"error": ...}`: without a
    readable review there is no uid to answer, and the API server treats the failed call under
    the webhook's failurePolicy. A usable review whose object cannot be read as its kind
    (`"completions": "ten"`) is a verdict on the object: HTTP 200 with an AdmissionReview that
    denies it (DEC-001, `status.code` 400 naming the field), so the client sees which field is
    wrong, and configuring DEC-001 (warn, dryrun, off) changes it like any rule.
    """
    try:
        parsed = parse_review(body)
    except BadReview as exc:
        return Outcome("bad_request", error=str(exc))
    try:
        # The object already went through the cluster's mutating stage (see validators.chain).
        admission = admit(parsed.request, settings, stages)
        verdict = admission.verdict
        assert verdict is not None  # the validating stage always judges
        if verdict.violations:
            shown = bounded(verdict)
            response = response_for(parsed.uid, shown.verdict)
            shown.finish(response)
        else:  # most reviews: nothing to cut, warn of or annotate (response_for's answer)
            response = {"uid": parsed.uid, "allowed": True}
        review = envelope(parsed, response)
    except Exception:  # a bug must not become a 5xx: deny with a clear, traceback-free reason
        log.exception("internal error judging request uid=%s", parsed.uid)
        return Outcome("error", _internal_error(parsed), parsed=parsed)
    result: Result = "allowed" if verdict.allowed else "denied"
    patched = admission.mutation.policy is not None
    return Outcome(result, review, parsed=parsed, verdict=verdict, patched=patched)


def handle_mutate(body: bytes, settings: Settings) -> Outcome:
    """/mutate: the Outcome for a raw body (bad bodies as in `handle_validate`). Never raises.

    Of a body over LOW_MEMORY_PARSE_BYTES only what the mutation reads is decoded
    (`parse_mutation_review`): the answer is the one the whole object gets, except that the
    fields /mutate does not read are not checked, so such an object unreadable only there
    (`"completions": "ten"`) is still suspended by its policy (/validate denies it, DEC-001);
    a smaller one is left unpatched."""
    return _mutate(parse_mutation_review, body, settings)


def handle_mutate_envelope(body: bytes, settings: Settings) -> Outcome | None:
    """`handle_mutate` for a body over LOW_MEMORY_PARSE_BYTES when its envelope alone reads it
    (a pass over the bytes, a few fields built); None when it does not (values orjson refuses,
    a read part that is not an object, not JSON): then `handle_mutate_full` answers it, at the
    memory cost of /validate's parse, which the server charges before calling it."""
    try:
        data = mutation_envelope.decode(body)
    except mutation_envelope.NOT_READ:
        return None
    return _mutate(lambda _: _review_of(data, None), body, settings)


def handle_mutate_full(body: bytes, settings: Settings) -> Outcome:
    """`handle_mutate` with the whole body decoded, as /validate decodes it."""
    return _mutate(parse_review, body, settings)


def _mutate(parse: Callable[[bytes], ParsedReview], body: bytes, settings: Settings) -> Outcome:
    try:
        parsed = parse(body)
    except BadReview as exc:
        return Outcome("bad_request", error=str(exc))
    try:
        review = mutation_response(parsed, settings)
    except Exception:  # never a 5xx: leave the object unchanged, /validate still judges it
        log.exception("internal error mutating request uid=%s", parsed.uid)
        unchanged: ResponsePayload = {"uid": parsed.uid, "allowed": True}
        return Outcome("error", envelope(parsed, unchanged), parsed=parsed)
    return Outcome("allowed", review, parsed=parsed, patched="patch" in review["response"])


def _internal_error(parsed: ParsedReview) -> ReviewResponse:
    status: Status = {
        "status": "Failure",
        "message": "jobguard could not judge this object (internal error, logged)",
        "reason": "BadRequest",
        "code": 400,
    }
    return envelope(parsed, {"uid": parsed.uid, "allowed": False, "status": status})
