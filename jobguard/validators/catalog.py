"""Every rule jobguard knows: its stable ID, area, summary, default enforcement, the upstream
source it mirrors and the functions that check it.

`docs/RULES.md` and the rule table of README.md are generated from this module (`jobguard rules
--markdown`, `make docs`) and a test keeps them equal. `JS-` rules are upstream's create-style
Job spec checks (`validateJobSpec`), which upstream does not name. `NE-` and `SUS-` rules are
not enforced upstream: NE-001 and NE-002 are on by default, the other NE rules off unless
configured; SUS rules act only when suspend policies are configured.

Each entry also carries the rule's other facts, which the rest of jobguard reads from here
rather than restating: the admission requests it judges (`requests`: the webhook registrations,
`jobguard.validators.registrations`; tests/firings.py checks them against what each rule fires
on), whether it holds for a stored object and why
(`at_rest`: `jobguard audit`, `jobguard.validators.at_rest`), and whether it is exported as
ValidatingAdmissionPolicy CEL and, if never, why (`vap`: `jobguard.validators.vap`, whose CEL
builders are keyed by the IDs marked exported).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from jobguard.validators.podtemplate import SCHEDULING_DIRECTIVES_TEXT


class Enforcement(StrEnum):
    DENY = "deny"
    WARN = "warn"
    DRYRUN = "dryrun"


class Reporting(StrEnum):
    """Whether field errors carry a rule's own ID, and if not, why not."""

    OWN = "own"
    """Its errors carry its ID."""
    CONDITION = "condition"
    """No errors of its own: a condition computed for the rules in `condition_for`."""
    ALIAS = "alias"
    """Reported under `alias_of` (the same upstream check)."""
    NOTHING_TO_CHECK = "nothing to check"
    """Names something jobguard, like upstream, deliberately leaves alone."""


JOB_CREATE = "jobs:CREATE"
JOB_UPDATE = "jobs:UPDATE"
JOB_STATUS_UPDATE = "jobs/status:UPDATE"
CRONJOB_CREATE = "cronjobs:CREATE"
CRONJOB_UPDATE = "cronjobs:UPDATE"
REQUESTS = (JOB_CREATE, JOB_UPDATE, JOB_STATUS_UPDATE, CRONJOB_CREATE, CRONJOB_UPDATE)
"""Every request jobguard judges, as `resource:OPERATION`."""


@dataclass(frozen=True, slots=True)
class AtRest:
    """Whether a rule holds for a stored object on its own (what `jobguard audit` reports), and
    why it does or does not."""

    holds: bool
    reason: str


@dataclass(frozen=True, slots=True)
class Vap:
    """Whether `jobguard export vap` can write a rule as ValidatingAdmissionPolicy CEL."""

    exported: bool
    """A CEL builder for it exists (`jobguard.validators.vap`); the configuration may still
    leave it out (disabled, no suspend policy needing it), and the export says why."""
    reason: str = ""
    """Why it is never exported, whatever the configuration (empty when `exported`)."""


@dataclass(frozen=True, slots=True)
class RuleInfo:
    id: str
    area: str
    summary: str
    requests: tuple[str, ...]
    """The admission requests it judges (`REQUESTS`): its area's unless the entry says."""
    at_rest: AtRest
    vap: Vap
    upstream: bool = True
    """Enforced by the API server itself (on by default); False for policy-only rules."""
    default_enforcement: Enforcement = Enforcement.DENY
    alias_of: str | None = None
    """Another ID that reports this rule's errors (the same upstream check)."""
    default_enabled: bool | None = None
    """On unless configured off; None means: on exactly when `upstream`."""
    source: str = ""
    """The upstream code (or, for policy-only rules, the design) this rule mirrors."""
    checked_in: tuple[str, ...] = ()
    """`module:function` names of the functions that check it (or compute its condition)."""
    reporting: Reporting = Reporting.OWN
    condition_for: tuple[str, ...] = ()
    """The rules whose check reads this rule's condition (`Reporting.CONDITION`)."""
    params: tuple[str, ...] = ()
    """The names its `params` in the configuration may have."""

    @property
    def enabled_by_default(self) -> bool:
        return self.upstream if self.default_enabled is None else self.default_enabled

    @property
    def needs_suspend_policies(self) -> bool:
        """A SUS rule: it judges nothing without a suspend policy."""
        return self.area == "policy"


@dataclass(frozen=True, slots=True)
class Area:
    """A group of rules: one section of docs/RULES.md."""

    key: str
    """The value of `RuleInfo.area`."""
    title: str
    description: str
    requests: tuple[str, ...] = REQUESTS
    """The requests its rules judge unless an entry says otherwise; empty when every entry must
    say (the policy rules, each judging its own)."""


_EXPORTED = Vap(exported=True)
_ENFORCED_UPSTREAM = Vap(exported=False, reason="enforced by the API server itself")


def _holds(reason: str) -> AtRest:
    return AtRest(holds=True, reason=reason)


def _not_at_rest(reason: str) -> AtRest:
    return AtRest(holds=False, reason=reason)


def _not_exported(reason: str) -> Vap:
    return Vap(exported=False, reason=reason)


def _r(
    rule_id: str,
    area: str,
    summary: str,
    *,
    at_rest: AtRest,
    requests: tuple[str, ...] = (),
    vap: Vap | None = None,
    **kwargs: object,
) -> RuleInfo:
    """An entry: `requests` defaults to the area's; `vap` to "enforced by the API server
    itself" for upstream rules, while a policy-only rule must say."""
    requests = requests or AREAS_BY_KEY[area].requests
    if not requests:
        raise ValueError(f"{rule_id}: the rules of area {area!r} say which requests they judge")
    if vap is None:
        if kwargs.get("upstream") is False:
            raise ValueError(f"{rule_id}: a policy rule says whether it is exported as CEL")
        vap = _ENFORCED_UPSTREAM
    return RuleInfo(
        rule_id,
        area,
        summary,
        requests=requests,
        at_rest=at_rest,
        vap=vap,
        **kwargs,  # type: ignore[arg-type]
    )


def _in(module: str, *functions: str) -> tuple[str, ...]:
    """`module:function` names; `module` relative to jobguard.validators.rules unless dotted."""
    qualified = module if "." in module else f"jobguard.validators.rules.{module}"
    return tuple(f"{qualified}:{function}" for function in functions)


_WARN = Enforcement.WARN
_VALIDATION = "pkg/apis/batch/validation/validation.go"
_STRATEGY = "pkg/registry/batch/job/strategy.go"
_STATUS_OPTIONS = f"{_STRATEGY}: getStatusValidationOptions"
_CORE = "pkg/apis/core/validation/validation.go"
_POLICY = "jobguard policy (not enforced upstream)"
_SUSPEND_KEP = f"{_POLICY}; follows the Suspend Jobs design (KEP-2232)"
_JOBS = (JOB_CREATE, JOB_UPDATE)
_CRONJOBS = (CRONJOB_CREATE, CRONJOB_UPDATE)

# Why a rule holds at rest, or does not (`RuleInfo.at_rest`), where several rules share it.
_STORED_SPEC = _holds(
    "the spec as stored, judged as the API server judges the next update of the object"
)
_STORED_STATUS = _holds(
    "a status invariant of one object (upstream checks it whenever its fields change)"
)
_STORED_TEMPLATE = _holds("the Job spec checks on the stored jobTemplate")
_STORED_CRONJOB_SPEC = _holds(
    "the CronJob spec as stored, judged as the API server judges its next update"
)
_AN_UPDATE = _not_at_rest("compares an update with the stored object; at rest there is no update")
_A_STATUS_UPDATE = _not_at_rest(
    "compares a status update with the stored status; at rest there is none"
)
_OLD_CONTROLLERS = _not_at_rest(
    "Job controllers before Kubernetes 1.31 finished Jobs without the FailureTarget and "
    "SuccessCriteriaMet conditions and with pods still terminating; upstream checks this only "
    "when a terminal condition changes, so a stored Job may lawfully break it"
)
_WHO_CHANGED = _not_at_rest("judges who changes a Job; a stored object does not say who changed it")
_NOTHING_AT_REST = _not_at_rest("nothing to check (as for requests)")
_CREATE_ONLY = _not_at_rest(
    "judged on CREATE only: the API server checked the stored name and namespace when the "
    "object was created"
)
_MANIFESTS_ONLY = _not_at_rest("manifests only: a stored object was decoded by the API server")
_QUEUE_POLICY = (
    f"{_POLICY}; the admission control the Suspend Jobs design (KEP-2232) leaves to "
    "webhooks, as queue controllers such as Kueue use it"
)

AREAS: tuple[Area, ...] = (
    Area(
        "decoding",
        "Decoding (DEC)",
        "Before any rule runs, the object (and on UPDATE the stored object) is read into typed "
        "views as strictly as the API server decodes JSON into its Go types: "
        '`"completions": "ten"` or `"suspend": "yes"` is an error naming the field, never a '
        "coercion. `decode_job` and `decode_cronjob` in `jobguard.validators.model` raise "
        "`ObjectDecodeError` naming every offending field at once, worded as the API server's "
        'OpenAPI validation words it (`spec.completions in body must be of type integer: "string"`)'
        ", and no other rule runs on such an object: each becomes a DEC-001 violation, resolved "
        "through the configuration like every rule. By default the webhook answers them with "
        "`allowed: false` and code 400 (one cause each), and `jobguard check` reports each at "
        "its field, with a manifest's other wrongly typed fields (SC-002).",
    ),
    Area(
        "template",
        "Pod template and selectors (TM)",
        "CREATE and UPDATE of `jobs`. On every request the selector must be present and well "
        "formed (TM-007) and select the template's labels (TM-006); unless `manualSelector` is "
        "true, the labels and selector the API server generates (`controller-uid` and "
        "`job-name`, plain and `batch.kubernetes.io/`-prefixed) must be intact (TM-005). On "
        "UPDATE the prefixed labels are required only when the stored template already carries "
        "both, as upstream's `RequirePrefixedLabels` option says. On UPDATE the pod template "
        "must also equal the stored one after both are defaulted (TM-001), with relaxations "
        "decided from the stored Job, not the new one (TM-004): scheduling directives "
        f"({SCHEDULING_DIRECTIVES_TEXT}) may "
        "change while it is suspended (TM-002). Up to Kubernetes 1.35 that means suspended and "
        "never started (KEP-2926); from 1.36 (KEP-5440, gates "
        "MutableSchedulingDirectivesForSuspendedJobs and MutablePodResourcesForSuspendedJobs) "
        "it means suspended with no active pods, and either never started or with the "
        "Suspended condition True, and container resources become mutable too (TM-003), in "
        "which case only the pod spec is compared. "
        "`kubernetesVersion` in the configuration selects the behaviour.",
        requests=_JOBS,
    ),
    Area(
        "immutability",
        "Immutable fields (IM)",
        "IM-001..IM-007 judge UPDATE of `jobs`: selector, completions, completionMode, "
        "podFailurePolicy, backoffLimitPerIndex, managedBy and successPolicy keep their stored "
        "values, compared semantically as upstream's `ValidateImmutableField` compares them "
        "(absent, null and empty are equal; quantities compare by value). An Indexed Job may "
        "change completions only together with parallelism, to the same value (elastic Indexed "
        "Jobs, IM-002); pod failure policies are compared after defaulting (IM-004). IM-008 is "
        "object metadata: label and annotation syntax on every judged Job and CronJob request "
        "and on pod templates (at `spec.template.labels`, the path upstream writes), and on "
        "UPDATE of `jobs`, `jobs/status` and `cronjobs` an unchanged name, namespace, uid, "
        "creationTimestamp, deletionTimestamp and deletionGracePeriodSeconds.",
        requests=(JOB_UPDATE,),
    ),
    Area(
        "jobspec",
        "Job spec (JS)",
        "Upstream's create-style checks of a Job spec (`validateJobSpec`), numbered here "
        "because upstream does not name them: counts and durations, completion mode, "
        "backoffLimitPerIndex and maxFailedIndexes, managedBy, podFailurePolicy, "
        "podReplacementPolicy and the template's restartPolicy, plus the Indexed hostname check "
        "of `ValidateJob` (JS-007). They run on CREATE and UPDATE of `jobs` and, reported as "
        "CJ-005, on CronJob templates. Upstream runs `ValidateJobSpec` twice on an UPDATE (from "
        "`ValidateJob` and from `ValidateJobSpecUpdate`), so an UPDATE's spec errors "
        "(JS-001..JS-006, JS-008, SP, TM-006, TM-007) appear twice in the response's causes, as "
        "the API server's do; the message lists each once. The pod template checks upstream "
        "also runs here (`ValidatePodTemplateSpec`) are the POD rules.",
        requests=_JOBS,
    ),
    Area(
        "successPolicy",
        "Success policy (SP)",
        "`spec.successPolicy` on CREATE and UPDATE of `jobs` (with the Job spec checks, so "
        "twice on UPDATE) and, reported as CJ-001, on CronJob templates. A successPolicy needs "
        "Indexed completion mode (SP-001); without it nothing else in the policy is checked. An "
        "Indexed Job without completions gets JS-003, and SP-006..SP-009 are skipped where "
        "upstream would read the missing value. SP-010 is the same upstream check as IM-007 and "
        "is reported as IM-007; configuring either ID affects it. The index-interval grammar "
        "(SP-006 for succeededIndexes; ST-023, ST-024 and ST-027 for status.completedIndexes and "
        "status.failedIndexes): a list such as `0,3-5,7` is comma-separated fragments, each an "
        "index or a range `first-last` with first < last; an index is a decimal integer as Go's "
        "`strconv.Atoi` reads it (ASCII digits after an optional `+`, within int64) and is below "
        "spec.completions; each fragment starts after the previous one ends; the empty string "
        "is the empty list. The first violation is reported in upstream's words (such as "
        '`non-increasing order, previous: 3, current: 1` or `too large index: "10"`). Lists are '
        "parsed in one pass without expanding ranges (`jobguard.validators.intervals`).",
        requests=_JOBS,
    ),
    Area(
        "status",
        "Status invariants (ST)",
        "UPDATE of `jobs/status` only. The API server copies the spec from the stored Job "
        "before validating a status update, so only the stored spec matters. ST-001..ST-011, "
        "ST-021, ST-022 and ST-035 are checked on every status update, and ST-020 too except "
        "for Indexed Jobs whose completions equal parallelism (elastic Indexed Jobs). Every "
        "other ST rule runs only when a field it reads changes: upstream derives these options "
        "from the old and new Job (`getStatusValidationOptions`), so a Job that already breaks "
        "a rule can still receive status updates that do not touch it. ST-023, ST-024 and "
        "ST-027 use the index-interval grammar described under Success policy (SP). From "
        "Kubernetes 1.36 (the newest status strategy) ST-031 does not apply to a suspended Job "
        "with zero completions, and ST-033 is reported as Invalid `field is immutable for "
        "unsuspended job once set` instead of Required `startTime cannot be removed for "
        "unsuspended job`. In every supported version ST-033 allows the update that resumes a "
        "Job (Suspended condition True to False) to change startTime.",
        requests=(JOB_STATUS_UPDATE,),
    ),
    Area(
        "suspend",
        "Suspend semantics (NE)",
        "Rules the API server does not enforce, drawn from the Suspend Jobs design (KEP-2232) "
        "and, for NE-009, KEP-5440. NE-001 and NE-002 are on by default; the others are off "
        "until the configuration turns them on. NE-004, NE-005, NE-006 and NE-009 are "
        "informational and default to `warn` (a configured default `enforcement` applies to "
        "them only when it is `dryrun`). NE-001, NE-005, NE-006, NE-007 and NE-009 judge "
        "UPDATE of `jobs`; NE-002, NE-003, NE-004 and NE-008 judge UPDATE of `jobs/status`. "
        "NE-007 takes the parameters `users` (globs) and `groups`: who may change "
        "`spec.suspend` of an existing Job (a CREATE is not a change: whether a new Job starts "
        "suspended is SUS-001's business). NE-009 applies up to Kubernetes 1.35 only: from 1.36 "
        "upstream allows the change (TM-002). Like the SUS rules, NE rules never judge exempt "
        "requesters (`exemptions`, which by default include the built-in controllers and "
        "cluster administrators).",
        requests=(),
    ),
    Area(
        "policy",
        "Suspend policies (SUS)",
        "Act only when `suspendPolicies` are configured, on CREATE and UPDATE of `jobs` "
        "(status updates and DELETE are never judged). A policy matches Jobs by namespace globs "
        "and a label selector (on the Job's labels, or its template's when it has none); an "
        "UPDATE is judged by the stored Job's policy, or the new one's when the stored Job "
        "matched none. A label with an empty value counts as absent, as Kueue reads "
        '`kueue.x-k8s.io/queue-name: ""` (no queue). Exempt requesters (`exemptions`) are never '
        "judged and the policy's `controllers` may do anything. With `forceSuspendOnCreate`, "
        "`/mutate` suspends a matched CREATE first (by anyone but the controllers, exempt "
        "requesters included, outside exempt namespaces), so SUS-001 judges the mutated object. "
        "The guarantee holds when `/mutate` does not answer: SUS-008 denies a built-in "
        "controller's unsuspended CREATE of a Job such a policy matches (the cronjob-controller "
        "acts for a CronJob's author; only exempt namespaces, configured exemptions and the "
        "administrators' groups are exempt from it), so the CronJob's run is missed, never "
        "started without the queue. "
        "SUS-006 keeps a running matched Job from growing past what the queue admitted: raising "
        "`parallelism`, or `completions` of an Indexed Job (elastic Indexed Jobs scale both), of "
        "an unfinished Job that stays unsuspended. SUS-007 (informational, `warn`) judges CREATE "
        "and UPDATE of `cronjobs`: when the Jobs a CronJob creates match a policy, it says "
        "whether they are held suspended for the queue, start at once (the cronjob-controller "
        "is exempt) or are denied by SUS-001. This is the admission control the Suspend Jobs "
        "design leaves to webhooks, in the shape queue controllers such as Kueue need. A "
        "response whose denials are all policy-only rules is 403 Forbidden, each line naming "
        "the rule, the policy and who may act instead.",
        requests=(),
    ),
    Area(
        "cronjob",
        "CronJob templates (CJ)",
        "CREATE and UPDATE of `cronjobs` (subresources are not judged). Upstream's "
        "create-style Job spec checks (`ValidateJobTemplateSpec`) run on "
        "`spec.jobTemplate.spec` on CREATE and UPDATE alike: successPolicy errors are reported "
        "as CJ-001 and other Job spec errors as CJ-005, with upstream's paths under "
        "`spec.jobTemplate.spec`, and a selector or `manualSelector: true` in the template is "
        "refused (CJ-003). The Job defaulter does not run on a template, so completions and "
        "completionMode are judged as written, and a template may be suspended. CJ-002 and "
        "CJ-004 name decisions rather than checks: the template is freely mutable, and a "
        "CronJob carries no Job status to judge. The CronJob's own fields (schedule, timeZone, "
        "concurrencyPolicy, history limits) are CS rules; the pod template is judged by the POD "
        "rules.",
        requests=_CRONJOBS,
    ),
    Area(
        "objectmeta",
        "Object metadata (OM)",
        "CREATE of `jobs` and `cronjobs`, as upstream's `ValidateObjectMeta` judges it after "
        "name generation: `metadata.generateName` and `metadata.name` are DNS-1123 subdomains "
        "(OM-001; a generated name is judged with `xxxxx` standing in for the random suffix, "
        "after the 58-character cut), a CronJob's name has at most 52 characters so its Jobs' "
        "names fit a label value (OM-002), and the namespace, the object's or the request's, is "
        "a DNS-1123 label (OM-003). Label and annotation syntax and size are IM-008, on Jobs, "
        "CronJobs and pod templates. On UPDATE the name is immutable (IM-008) and not judged "
        "again, so objects with names accepted by older rules can still be updated. The owner "
        "references (OM-004: apiVersion, kind, name and uid set, no Event owner, at most one "
        "controller; each reference's errors under its index from 1.37, under `ownerReferences` before, as apimachinery v0.37 changed them) and the finalizers (OM-005: qualified names, a name without a domain only "
        "`kubernetes`, `orphan` or `foregroundDeletion`, not both of the last two, and no new "
        "finalizer on an object being deleted) are judged on every CREATE and UPDATE, as the "
        "API server's registry judges them before any update (`validateCommonFields`). A pod "
        "template's owner references and finalizers are not judged: upstream's "
        "`ValidatePodTemplateSpec` judges only its labels and annotations.",
        requests=(JOB_CREATE, CRONJOB_CREATE),
    ),
    Area(
        "cronjobspec",
        "CronJob spec (CS)",
        "CREATE and UPDATE of `cronjobs`, upstream's `validateCronJobSpec`. CS-001: "
        "`spec.schedule` is required and parses as the API server and the CronJob controller "
        "parse it (robfig/cron v3 `ParseStandard`: five fields, names of months and days, `*`, "
        "`?`, ranges and steps; `@yearly`, `@annually`, `@monthly`, `@weekly`, `@daily`, "
        "`@midnight`, `@hourly` and `@every <duration>` in Go's duration syntax), with "
        "upstream's messages; `TZ=` or `CRON_TZ=` in the schedule is refused (on UPDATE only "
        "when the stored schedule had none, and then together with `spec.timeZone`). CS-002: "
        "`spec.timeZone` is a zone of the IANA database, judged on CREATE and when an UPDATE "
        "changes it; the database is the pinned `tzdata` package, so the verdict does not "
        "depend on the machine. CS-003: `concurrencyPolicy` is Allow, Forbid or Replace (unset "
        "is defaulted to Allow). CS-004: `startingDeadlineSeconds`, `successfulJobsHistoryLimit` "
        "and `failedJobsHistoryLimit` are not negative.",
        requests=_CRONJOBS,
    ),
    Area(
        "pod",
        "Pod template (POD)",
        "Upstream's `ValidatePodTemplateSpec` as on CREATE, on a Job's `spec.template` "
        "(CREATE and UPDATE of `jobs`, with the Job spec checks, so twice on UPDATE as upstream "
        "reports them) and a CronJob's `spec.jobTemplate.spec.template`: containers present "
        "(POD-001), container and init-container names DNS-1123 labels, unique across both "
        "lists (POD-002), an image (POD-003), `imagePullPolicy` Always, IfNotPresent or Never "
        "(POD-004), ports in range with valid unique names, known protocols and no host port "
        "used twice (POD-005), environment variable names (POD-006, the relaxed rule of "
        "Kubernetes 1.32 and later: printable ASCII but '='), volume names valid and unique "
        "(POD-007), volume mounts naming a valid volume at a unique, non-empty mountPath "
        "(POD-008), resource names and quantities in the Kubernetes quantity grammar, "
        "non-negative, whole numbers for extended resources and multiples of the page size for "
        "hugepages (POD-009, hugepages on CREATE only, as upstream tolerates stored values), "
        "and requests no greater than limits, equal for resources that cannot be overcommitted "
        "(extended resources, hugepages), whose limit is required (POD-010). Beyond these, the "
        "rest of upstream's pod-spec validation, one rule per upstream area (POD-011..POD-025: "
        "probes and lifecycle, init containers and sidecars, resize policies, env sources, volume "
        "sources, mounts and devices, container misc, security contexts, OS, affinity, "
        "tolerations, topology spread, DNS, scalar fields, resource claims), with the "
        "differences of the "
        "configured `kubernetesVersion`'s default feature gates: the fields of a gate off "
        "by default are dropped before judging, as the API server drops them "
        "(`DropDisabledTemplateFields`), unless the stored template uses them. `privileged` "
        "and Windows hostProcess containers are judged as on an API server started with "
        "`--allow-privileged=true`, as installers and managed offerings start it: upstream's "
        '"disallowed by cluster policy" never fires. Values are judged '
        "after the API server's defaulting (an unset imagePullPolicy or protocol is fine); "
        "wrongly typed values are left to the schema rules (SC). What is not covered is listed "
        'in README.md ("What the pod rules cover").',
        requests=(JOB_CREATE, JOB_UPDATE, CRONJOB_CREATE, CRONJOB_UPDATE),
    ),
    Area(
        "schema",
        "OpenAPI schema (SC)",
        "Manifests only (`jobguard check`), never objects the API server sent to the webhook: "
        "the API server has already decoded those into its types (dropping or refusing unknown "
        "fields), and a cluster newer than the configured `kubernetesVersion` sends fields this "
        "version's schema does not know, which must not be denied. A manifest is validated "
        "against the OpenAPI schema of `batch/v1` Job or CronJob of the configured "
        "`kubernetesVersion`, shipped with jobguard (one self-contained file per version, "
        "generated from kubernetes-validate; Apache-2.0, The Kubernetes Authors) and compiled "
        "once by jsonschema-rs. SC-001: unknown fields, reported as strict field validation "
        '(kubectl\'s default) reports them, `unknown field "spec.foo"`. SC-002: types, '
        "enumerations and 32- and 64-bit integer ranges, worded as OpenAPI validation words "
        "them (`spec.template.spec.containers[0].ports[0].containerPort in body must be of type "
        'integer: "string"`). SC-003: required fields, except those the API server defaults '
        "or accepts as absent (such as an onPodConditions pattern's status). Only the new "
        "object is judged; an `--old` document stands in for a stored object.",
    ),
)

AREAS_BY_KEY: dict[str, Area] = {area.key: area for area in AREAS}

RULES: tuple[RuleInfo, ...] = (
    _r(
        "DEC-001",
        "decoding",
        "the object can be read as its kind (field types)",
        source="k8s.io/apimachinery JSON decoding into the batch/v1 Go types",
        checked_in=_in("jobguard.validators.pipeline", "_unreadable"),
        at_rest=_holds("an object jobguard cannot read as its kind is reported, as for a request"),
        vap=_not_exported("the API server decodes objects itself"),
    ),
    _r(
        "TM-001",
        "template",
        "pod template is immutable on update",
        source=f"{_VALIDATION}: validatePodTemplateUpdate",
        checked_in=_in("template", "validate_pod_template_update"),
        requests=(JOB_UPDATE,),
        at_rest=_AN_UPDATE,
    ),
    _r(
        "TM-002",
        "template",
        "scheduling directives are mutable while safely suspended",
        source=f"{_VALIDATION}: validatePodTemplateUpdate; "
        f"{_STRATEGY}: validationOptionsForJob (AllowMutableSchedulingDirectives)",
        checked_in=_in("jobguard.validators.strategy", "job_options"),
        reporting=Reporting.CONDITION,
        condition_for=("TM-001", "TM-003"),
        requests=(JOB_UPDATE,),
        at_rest=_AN_UPDATE,
    ),
    _r(
        "TM-003",
        "template",
        "container resources are mutable while safely suspended (KEP-5440)",
        source=f"{_VALIDATION}: validatePodTemplateUpdate; "
        f"{_STRATEGY}: validationOptionsForJob (KEP-5440)",
        checked_in=_in("template", "validate_pod_template_update"),
        requests=(JOB_UPDATE,),
        at_rest=_AN_UPDATE,
    ),
    _r(
        "TM-004",
        "template",
        "relaxations follow the old spec.suspend",
        source=f"{_STRATEGY}: validationOptionsForJob (reads the old Job)",
        checked_in=_in("jobguard.validators.strategy", "job_options"),
        reporting=Reporting.CONDITION,
        condition_for=("TM-001", "TM-003"),
        requests=(JOB_UPDATE,),
        at_rest=_AN_UPDATE,
    ),
    _r(
        "TM-005",
        "template",
        "generated job-name/controller-uid labels and selector",
        source=f"{_VALIDATION}: validateGeneratedSelector; "
        f"{_STRATEGY}: validationOptionsForJob (RequirePrefixedLabels)",
        checked_in=_in("template", "validate_generated_selector"),
        at_rest=_STORED_SPEC,
    ),
    _r(
        "TM-006",
        "template",
        "selector must select the template labels",
        source=f"{_VALIDATION}: ValidateJobSpec",
        checked_in=_in("template", "validate_job_spec_selector"),
        at_rest=_STORED_SPEC,
    ),
    _r(
        "TM-007",
        "template",
        "selector is required",
        source=f"{_VALIDATION}: ValidateJobSpec (ValidateLabelSelector)",
        checked_in=_in("template", "validate_job_spec_selector"),
        at_rest=_STORED_SPEC,
    ),
    _r(
        "IM-001",
        "immutability",
        "spec.selector is immutable",
        source=f"{_VALIDATION}: ValidateJobSpecUpdate",
        checked_in=_in("immutable", "validate_job_spec_update"),
        at_rest=_AN_UPDATE,
    ),
    _r(
        "IM-002",
        "immutability",
        "spec.completions is immutable (Indexed: in tandem with parallelism)",
        source=f"{_VALIDATION}: validateCompletions",
        checked_in=_in("immutable", "validate_completions"),
        at_rest=_AN_UPDATE,
    ),
    _r(
        "IM-003",
        "immutability",
        "spec.completionMode is immutable",
        source=f"{_VALIDATION}: ValidateJobSpecUpdate",
        checked_in=_in("immutable", "validate_job_spec_update"),
        at_rest=_AN_UPDATE,
    ),
    _r(
        "IM-004",
        "immutability",
        "spec.podFailurePolicy is immutable",
        source=f"{_VALIDATION}: ValidateJobSpecUpdate",
        checked_in=_in("immutable", "validate_pod_failure_policy_update"),
        at_rest=_AN_UPDATE,
    ),
    _r(
        "IM-005",
        "immutability",
        "spec.backoffLimitPerIndex is immutable",
        source=f"{_VALIDATION}: ValidateJobSpecUpdate",
        checked_in=_in("immutable", "validate_job_spec_update"),
        at_rest=_AN_UPDATE,
    ),
    _r(
        "IM-006",
        "immutability",
        "spec.managedBy is immutable",
        source=f"{_VALIDATION}: ValidateJobSpecUpdate",
        checked_in=_in("immutable", "validate_job_spec_update"),
        at_rest=_AN_UPDATE,
    ),
    _r(
        "IM-007",
        "immutability",
        "spec.successPolicy is immutable",
        source=f"{_VALIDATION}: ValidateJobSpecUpdate",
        checked_in=_in("immutable", "validate_job_spec_update"),
        at_rest=_AN_UPDATE,
    ),
    _r(
        "IM-008",
        "immutability",
        "object metadata update rules",
        source="pkg/apis/core/validation: ValidateObjectMeta, ValidateObjectMetaUpdate",
        checked_in=_in(
            "metadata_update",
            "validate_annotations",
            "validate_labels_and_annotations",
            "validate_object_meta_update",
        ),
        requests=(JOB_CREATE, JOB_UPDATE, JOB_STATUS_UPDATE, CRONJOB_CREATE, CRONJOB_UPDATE),
        at_rest=_holds("label and annotation syntax of the stored metadata"),
    ),
    _r(
        "JS-001",
        "jobspec",
        "counts and durations are non-negative",
        source=f"{_VALIDATION}: validateJobSpec",
        checked_in=_in("jobspec", "_non_negative_counts"),
        at_rest=_STORED_SPEC,
    ),
    _r(
        "JS-002",
        "jobspec",
        "completionMode and podReplacementPolicy take known values",
        source=f"{_VALIDATION}: validateJobSpec, validatePodReplacementPolicy",
        checked_in=_in("jobspec", "_completion_mode", "_pod_replacement_policy"),
        at_rest=_STORED_SPEC,
    ),
    _r(
        "JS-003",
        "jobspec",
        "Indexed jobs need completions",
        source=f"{_VALIDATION}: validateJobSpec",
        checked_in=_in("jobspec", "_completion_mode"),
        at_rest=_STORED_SPEC,
    ),
    _r(
        "JS-004",
        "jobspec",
        "backoffLimitPerIndex / maxFailedIndexes constraints",
        source=f"{_VALIDATION}: validateJobSpec",
        checked_in=_in("jobspec", "_non_negative_counts", "_completion_mode"),
        at_rest=_STORED_SPEC,
    ),
    _r(
        "JS-005",
        "jobspec",
        "pod template restartPolicy is OnFailure or Never (Never with podFailurePolicy)",
        source=f"{_VALIDATION}: validateJobSpec",
        checked_in=_in("jobspec", "_restart_policy"),
        at_rest=_STORED_SPEC,
    ),
    _r(
        "JS-006",
        "jobspec",
        "managedBy is a short domain-prefixed path",
        source=f"{_VALIDATION}: validateJobSpec (IsDomainPrefixedPath)",
        checked_in=_in("jobspec", "_managed_by", "_managed_by_parts"),
        at_rest=_STORED_SPEC,
    ),
    _r(
        "JS-007",
        "jobspec",
        "Indexed pod hostnames are valid DNS labels",
        source=f"{_VALIDATION}: ValidateJob",
        checked_in=_in("jobspec", "validate_indexed_hostname"),
        at_rest=_STORED_SPEC,
    ),
    _r(
        "JS-008",
        "jobspec",
        "podFailurePolicy rules are well formed",
        source=f"{_VALIDATION}: validatePodFailurePolicy",
        checked_in=_in(
            "pod_failure_policy", "validate_pod_failure_policy", "_exit_codes", "_pod_conditions"
        ),
        at_rest=_STORED_SPEC,
    ),
    _r(
        "SP-001",
        "successPolicy",
        "successPolicy requires Indexed completion mode",
        source=f"{_VALIDATION}: validateJobSpec",
        checked_in=_in("success_policy", "validate_success_policy"),
        at_rest=_STORED_SPEC,
    ),
    _r(
        "SP-002",
        "successPolicy",
        "successPolicy needs at least one rule",
        source=f"{_VALIDATION}: validateSuccessPolicy",
        checked_in=_in("success_policy", "validate_success_policy"),
        at_rest=_STORED_SPEC,
    ),
    _r(
        "SP-003",
        "successPolicy",
        "successPolicy has at most 20 rules",
        source=f"{_VALIDATION}: validateSuccessPolicy",
        checked_in=_in("success_policy", "validate_success_policy"),
        at_rest=_STORED_SPEC,
    ),
    _r(
        "SP-004",
        "successPolicy",
        "each rule sets succeededIndexes or succeededCount",
        source=f"{_VALIDATION}: validateSuccessPolicyRule",
        checked_in=_in("success_policy", "_check_success_policy_rule"),
        at_rest=_STORED_SPEC,
    ),
    _r(
        "SP-005",
        "successPolicy",
        "succeededIndexes is at most 64 KiB",
        source=f"{_VALIDATION}: validateSuccessPolicyRule",
        checked_in=_in("success_policy", "_check_success_policy_rule"),
        at_rest=_STORED_SPEC,
    ),
    _r(
        "SP-006",
        "successPolicy",
        "succeededIndexes follows the interval grammar",
        source=f"{_VALIDATION}: validateSuccessPolicyRule, validateIndexesFormat",
        checked_in=_in("success_policy", "_check_success_policy_rule"),
        at_rest=_STORED_SPEC,
    ),
    _r(
        "SP-007",
        "successPolicy",
        "succeededCount is non-negative",
        source=f"{_VALIDATION}: validateSuccessPolicyRule",
        checked_in=_in("success_policy", "_check_success_policy_rule"),
        at_rest=_STORED_SPEC,
    ),
    _r(
        "SP-008",
        "successPolicy",
        "succeededCount <= completions",
        source=f"{_VALIDATION}: validateSuccessPolicyRule",
        checked_in=_in("success_policy", "_check_success_policy_rule"),
        at_rest=_STORED_SPEC,
    ),
    _r(
        "SP-009",
        "successPolicy",
        "succeededCount <= size of succeededIndexes",
        source=f"{_VALIDATION}: validateSuccessPolicyRule",
        checked_in=_in("success_policy", "_check_success_policy_rule"),
        at_rest=_STORED_SPEC,
    ),
    _r(
        "SP-010",
        "successPolicy",
        "successPolicy is immutable (reported as IM-007)",
        alias_of="IM-007",
        source=f"{_VALIDATION}: ValidateJobSpecUpdate",
        checked_in=_in("immutable", "validate_job_spec_update"),
        reporting=Reporting.ALIAS,
        at_rest=_AN_UPDATE,
    ),
    _r(
        "ST-001",
        "status",
        "status.active >= 0",
        source=f"{_VALIDATION}: validateJobStatus",
        checked_in=_in("status", "_always_on_counters"),
        at_rest=_STORED_STATUS,
    ),
    _r(
        "ST-002",
        "status",
        "status.succeeded >= 0",
        source=f"{_VALIDATION}: validateJobStatus",
        checked_in=_in("status", "_always_on_counters"),
        at_rest=_STORED_STATUS,
    ),
    _r(
        "ST-003",
        "status",
        "status.failed >= 0",
        source=f"{_VALIDATION}: validateJobStatus",
        checked_in=_in("status", "_always_on_counters"),
        at_rest=_STORED_STATUS,
    ),
    _r(
        "ST-004",
        "status",
        "status.ready >= 0",
        source=f"{_VALIDATION}: validateJobStatus",
        checked_in=_in("status", "_always_on_counters"),
        at_rest=_STORED_STATUS,
    ),
    _r(
        "ST-005",
        "status",
        "status.terminating >= 0",
        source=f"{_VALIDATION}: validateJobStatus",
        checked_in=_in("status", "_always_on_counters"),
        at_rest=_STORED_STATUS,
    ),
    _r(
        "ST-006",
        "status",
        "uncountedTerminatedPods UIDs non-empty and unique",
        source=f"{_VALIDATION}: validateJobStatus",
        checked_in=_in("status", "_uid_errors"),
        at_rest=_STORED_STATUS,
    ),
    _r(
        "ST-007",
        "status",
        "not SuccessCriteriaMet and Failed",
        source=f"{_VALIDATION}: validateJobStatus",
        checked_in=_in("status", "validate_job_status"),
        at_rest=_STORED_STATUS,
    ),
    _r(
        "ST-008",
        "status",
        "not SuccessCriteriaMet and FailureTarget",
        source=f"{_VALIDATION}: validateJobStatus",
        checked_in=_in("status", "validate_job_status"),
        at_rest=_STORED_STATUS,
    ),
    _r(
        "ST-009",
        "status",
        "Complete needs SuccessCriteriaMet when successPolicy is set",
        source=f"{_VALIDATION}: validateJobStatus",
        checked_in=_in("status", "validate_job_status"),
        at_rest=_STORED_STATUS,
    ),
    _r(
        "ST-010",
        "status",
        "SuccessCriteriaMet cannot be removed",
        source=f"{_VALIDATION}: ValidateJobStatusUpdate",
        checked_in=_in("status", "validate_job_status_update"),
        at_rest=_A_STATUS_UPDATE,
    ),
    _r(
        "ST-011",
        "status",
        "SuccessCriteriaMet cannot follow Complete",
        source=f"{_VALIDATION}: ValidateJobStatusUpdate",
        checked_in=_in("status", "validate_job_status_update"),
        at_rest=_A_STATUS_UPDATE,
    ),
    _r(
        "ST-020",
        "status",
        "succeeded counter does not decrease",
        source=f"{_VALIDATION}: ValidateJobStatusUpdate; {_STATUS_OPTIONS}",
        checked_in=_in("status", "validate_job_status_update"),
        at_rest=_A_STATUS_UPDATE,
    ),
    _r(
        "ST-021",
        "status",
        "failed counter does not decrease",
        source=f"{_VALIDATION}: ValidateJobStatusUpdate; {_STATUS_OPTIONS}",
        checked_in=_in("status", "validate_job_status_update"),
        at_rest=_A_STATUS_UPDATE,
    ),
    _r(
        "ST-022",
        "status",
        "terminal conditions are sticky",
        source=f"{_VALIDATION}: ValidateJobStatusUpdate; {_STATUS_OPTIONS}",
        checked_in=_in("status", "validate_job_status_update"),
        at_rest=_A_STATUS_UPDATE,
    ),
    _r(
        "ST-023",
        "status",
        "completedIndexes grammar",
        source=f"{_VALIDATION}: validateJobStatus, validateIndexesFormat; {_STATUS_OPTIONS}",
        checked_in=_in("status", "_index_errors"),
        at_rest=_STORED_STATUS,
    ),
    _r(
        "ST-024",
        "status",
        "failedIndexes grammar",
        source=f"{_VALIDATION}: validateJobStatus, validateIndexesFormat; {_STATUS_OPTIONS}",
        checked_in=_in("status", "_index_errors"),
        at_rest=_STORED_STATUS,
    ),
    _r(
        "ST-025",
        "status",
        "completedIndexes only for Indexed jobs",
        source=f"{_VALIDATION}: validateJobStatus; {_STATUS_OPTIONS}",
        checked_in=_in("status", "_index_errors"),
        at_rest=_STORED_STATUS,
    ),
    _r(
        "ST-026",
        "status",
        "failedIndexes needs backoffLimitPerIndex",
        source=f"{_VALIDATION}: validateJobStatus; {_STATUS_OPTIONS}",
        checked_in=_in("status", "_index_errors"),
        at_rest=_STORED_STATUS,
    ),
    _r(
        "ST-027",
        "status",
        "failedIndexes and completedIndexes do not overlap",
        source=f"{_VALIDATION}: validateJobStatus, validateFailedIndexesNotOverlapCompleted; "
        f"{_STATUS_OPTIONS}",
        checked_in=_in("status", "_index_errors"),
        at_rest=_STORED_STATUS,
    ),
    _r(
        "ST-028",
        "status",
        "Failed needs FailureTarget",
        source=f"{_VALIDATION}: validateJobStatus; {_STATUS_OPTIONS}",
        checked_in=_in("status", "validate_job_status"),
        at_rest=_OLD_CONTROLLERS,
    ),
    _r(
        "ST-029",
        "status",
        "Complete needs SuccessCriteriaMet",
        source=f"{_VALIDATION}: validateJobStatus; {_STATUS_OPTIONS}",
        checked_in=_in("status", "validate_job_status"),
        at_rest=_OLD_CONTROLLERS,
    ),
    _r(
        "ST-030",
        "status",
        "finished jobs have no active pods",
        source=f"{_VALIDATION}: validateJobStatus; {_STATUS_OPTIONS}",
        checked_in=_in("status", "validate_job_status"),
        at_rest=_STORED_STATUS,
    ),
    _r(
        "ST-031",
        "status",
        "finished jobs have a startTime",
        source=f"{_VALIDATION}: validateJobStatus; {_STATUS_OPTIONS}",
        checked_in=_in("status", "validate_job_status"),
        at_rest=_STORED_STATUS,
    ),
    _r(
        "ST-032",
        "status",
        "finished jobs have no uncounted terminated pods",
        source=f"{_VALIDATION}: validateJobStatus; {_STATUS_OPTIONS}",
        checked_in=_in("status", "validate_job_status"),
        at_rest=_STORED_STATUS,
    ),
    _r(
        "ST-033",
        "status",
        "startTime is fixed unless suspended",
        source=f"{_VALIDATION}: ValidateJobStatusUpdate; {_STATUS_OPTIONS}",
        checked_in=_in("status", "validate_job_status_update"),
        at_rest=_A_STATUS_UPDATE,
    ),
    _r(
        "ST-034",
        "status",
        "completionTime is not before startTime",
        source=f"{_VALIDATION}: validateJobStatus; {_STATUS_OPTIONS}",
        checked_in=_in("status", "validate_job_status"),
        at_rest=_STORED_STATUS,
    ),
    _r(
        "ST-035",
        "status",
        "completionTime is immutable",
        source=f"{_VALIDATION}: ValidateJobStatusUpdate; {_STATUS_OPTIONS}",
        checked_in=_in("status", "validate_job_status_update"),
        at_rest=_A_STATUS_UPDATE,
    ),
    _r(
        "ST-036",
        "status",
        "completionTime needs Complete",
        source=f"{_VALIDATION}: validateJobStatus; {_STATUS_OPTIONS}",
        checked_in=_in("status", "validate_job_status"),
        at_rest=_STORED_STATUS,
    ),
    _r(
        "ST-037",
        "status",
        "Complete needs completionTime",
        source=f"{_VALIDATION}: validateJobStatus; {_STATUS_OPTIONS}",
        checked_in=_in("status", "validate_job_status"),
        at_rest=_STORED_STATUS,
    ),
    _r(
        "ST-038",
        "status",
        "not Complete and Failed",
        source=f"{_VALIDATION}: validateJobStatus; {_STATUS_OPTIONS}",
        checked_in=_in("status", "validate_job_status"),
        at_rest=_STORED_STATUS,
    ),
    _r(
        "ST-039",
        "status",
        "not Complete and FailureTarget",
        source=f"{_VALIDATION}: validateJobStatus; {_STATUS_OPTIONS}",
        checked_in=_in("status", "validate_job_status"),
        at_rest=_STORED_STATUS,
    ),
    _r(
        "ST-040",
        "status",
        "ready <= active",
        source=f"{_VALIDATION}: validateJobStatus; {_STATUS_OPTIONS}",
        checked_in=_in("status", "validate_job_status"),
        at_rest=_STORED_STATUS,
    ),
    _r(
        "ST-041",
        "status",
        "finished jobs have no terminating pods",
        source=f"{_VALIDATION}: validateJobStatus; {_STATUS_OPTIONS}",
        checked_in=_in("status", "validate_job_status"),
        at_rest=_OLD_CONTROLLERS,
    ),
    _r(
        "NE-001",
        "suspend",
        "a finished Job cannot be suspended",
        upstream=False,
        default_enabled=True,
        source=_SUSPEND_KEP,
        checked_in=_in("suspend", "check_suspend_update"),
        requests=(JOB_UPDATE,),
        at_rest=_not_at_rest(
            "judges the act of suspending; a Job suspended as it finishes may lawfully end up "
            "finished with spec.suspend true"
        ),
        vap=_EXPORTED,
    ),
    _r(
        "NE-002",
        "suspend",
        "the Suspended condition is flipped to False, never removed",
        upstream=False,
        default_enabled=True,
        source=_SUSPEND_KEP,
        checked_in=_in("suspend", "check_suspend_status"),
        requests=(JOB_STATUS_UPDATE,),
        at_rest=_holds(
            "at most one Suspended condition: with two, every later status update of the Job is "
            "denied by NE-002"
        ),
        vap=_EXPORTED,
    ),
    _r(
        "NE-003",
        "suspend",
        "Suspended=True only once no pods are active",
        upstream=False,
        source=_SUSPEND_KEP,
        checked_in=_in("suspend", "check_suspend_status"),
        requests=(JOB_STATUS_UPDATE,),
        at_rest=_not_at_rest(
            "the Suspended condition is set while the pods are being deleted; active pods with "
            "Suspended=True are a passing state"
        ),
        vap=_EXPORTED,
    ),
    _r(
        "NE-004",
        "suspend",
        "startTime is not set while suspended",
        upstream=False,
        default_enforcement=_WARN,
        source=_SUSPEND_KEP,
        checked_in=_in("suspend", "check_suspend_status"),
        requests=(JOB_STATUS_UPDATE,),
        at_rest=_not_at_rest(
            "a Job suspended after it ran keeps its startTime until it is resumed"
        ),
        vap=_EXPORTED,
    ),
    _r(
        "NE-005",
        "suspend",
        "activeDeadlineSeconds restarts on resume",
        upstream=False,
        default_enforcement=_WARN,
        source=_SUSPEND_KEP,
        checked_in=_in("suspend", "check_suspend_update"),
        requests=(JOB_UPDATE,),
        at_rest=_not_at_rest("judges a resume"),
        vap=_EXPORTED,
    ),
    _r(
        "NE-006",
        "suspend",
        "suspending a running Job deletes its active pods",
        upstream=False,
        default_enforcement=_WARN,
        source=_SUSPEND_KEP,
        checked_in=_in("suspend", "check_suspend_update"),
        requests=(JOB_UPDATE,),
        at_rest=_not_at_rest("judges a suspension"),
        vap=_EXPORTED,
    ),
    _r(
        "NE-007",
        "suspend",
        "only configured requesters may change spec.suspend",
        upstream=False,
        source=_QUEUE_POLICY,
        checked_in=_in("suspend", "suspend_options", "_ne007"),
        params=("users", "groups"),
        requests=(JOB_UPDATE,),
        at_rest=_WHO_CHANGED,
        vap=_EXPORTED,
    ),
    _r(
        "NE-008",
        "suspend",
        "no terminal condition while Suspended=True",
        upstream=False,
        source=_SUSPEND_KEP,
        checked_in=_in("suspend", "check_suspend_status"),
        requests=(JOB_STATUS_UPDATE,),
        at_rest=_holds("no Complete or Failed condition while Suspended=True"),
        vap=_EXPORTED,
    ),
    _r(
        "NE-009",
        "suspend",
        "scheduling directives of a Job that already ran",
        upstream=False,
        default_enforcement=_WARN,
        source=f"{_POLICY}; follows KEP-5440 (mutable from Kubernetes 1.36)",
        checked_in=_in("suspend", "check_suspend_update"),
        requests=(JOB_UPDATE,),
        at_rest=_not_at_rest("judges a change of the template"),
        vap=_EXPORTED,
    ),
    _r(
        "SUS-001",
        "policy",
        "matched Jobs are created suspended (except by controllers)",
        upstream=False,
        default_enabled=True,
        source=_QUEUE_POLICY,
        checked_in=_in("suspend_policy", "check_suspend_policy_create"),
        requests=(JOB_CREATE,),
        at_rest=_holds(
            "a matched, unfinished Job that is not suspended and has no Suspended condition "
            "never was suspended: it started without the queue"
        ),
        vap=_EXPORTED,
    ),
    _r(
        "SUS-002",
        "policy",
        "only controllers resume matched Jobs",
        upstream=False,
        default_enabled=True,
        source=_QUEUE_POLICY,
        checked_in=_in("suspend_policy", "check_suspend_policy_update"),
        requests=(JOB_UPDATE,),
        at_rest=_WHO_CHANGED,
        vap=_EXPORTED,
    ),
    _r(
        "SUS-003",
        "policy",
        "only controllers suspend matched Jobs unless usersMaySuspend",
        upstream=False,
        default_enabled=True,
        source=_QUEUE_POLICY,
        checked_in=_in("suspend_policy", "check_suspend_policy_update"),
        requests=(JOB_UPDATE,),
        at_rest=_WHO_CHANGED,
        vap=_EXPORTED,
    ),
    _r(
        "SUS-004",
        "policy",
        "only controllers change scheduling directives of matched Jobs",
        upstream=False,
        default_enabled=True,
        source=_QUEUE_POLICY,
        checked_in=_in("suspend_policy", "check_suspend_policy_update"),
        requests=(JOB_UPDATE,),
        at_rest=_WHO_CHANGED,
        vap=_EXPORTED,
    ),
    _r(
        "SUS-005",
        "policy",
        "an unfinished matched Job cannot be relabelled out of its policy",
        upstream=False,
        default_enabled=True,
        source=_QUEUE_POLICY,
        checked_in=_in("suspend_policy", "check_policy_labels"),
        requests=(JOB_UPDATE, JOB_STATUS_UPDATE),
        at_rest=_WHO_CHANGED,
        vap=_EXPORTED,
    ),
    _r(
        "SUS-006",
        "policy",
        "only controllers scale up running matched Jobs",
        upstream=False,
        default_enabled=True,
        source=_QUEUE_POLICY,
        checked_in=_in("suspend_policy", "_scaled_up"),
        requests=(JOB_UPDATE,),
        at_rest=_WHO_CHANGED,
        vap=_EXPORTED,
    ),
    _r(
        "SUS-007",
        "policy",
        "what becomes of the Jobs a CronJob creates under a policy",
        upstream=False,
        default_enabled=True,
        default_enforcement=_WARN,
        source=_QUEUE_POLICY,
        checked_in=_in("suspend_policy", "check_cronjob_policy"),
        requests=_CRONJOBS,
        at_rest=_holds(
            "a stored CronJob whose Jobs a suspend policy matches: they are held for the queue"
        ),
        vap=_not_exported(
            "informational note on CronJobs whose Jobs a policy holds; only the webhook adds it "
            "(a Warn policy could carry it, not exported yet)"
        ),
    ),
    _r(
        "SUS-008",
        "policy",
        "a built-in controller's unsuspended CREATE of a force-suspended Job (mutation missed)",
        upstream=False,
        default_enabled=True,
        source=_QUEUE_POLICY,
        checked_in=_in("suspend_policy", "check_forced_suspend_kept"),
        requests=(JOB_CREATE,),
        at_rest=_not_at_rest(
            "judges who created a Job; at rest SUS-001 reports a matched Job that never was "
            "suspended, whoever created it"
        ),
        vap=_EXPORTED,
    ),
    _r(
        "SUS-009",
        "policy",
        "a running Job cannot be relabelled into a policy (except by its controllers)",
        upstream=False,
        default_enabled=True,
        source=_QUEUE_POLICY,
        checked_in=_in("suspend_policy", "check_policy_labels"),
        requests=(JOB_UPDATE, JOB_STATUS_UPDATE),
        at_rest=_WHO_CHANGED,
        vap=_EXPORTED,
    ),
    _r(
        "CJ-001",
        "cronjob",
        "successPolicy rules on spec.jobTemplate.spec",
        source=f"{_VALIDATION}: ValidateJobTemplateSpec (validateJobSpec)",
        checked_in=_in("cronjob_template", "_as_cronjob_rule"),
        at_rest=_STORED_TEMPLATE,
    ),
    _r(
        "CJ-002",
        "cronjob",
        "jobTemplate is freely mutable",
        source=f"{_VALIDATION}: ValidateCronJobUpdate (no immutable template fields)",
        checked_in=_in("cronjob_template", "validate_job_template_spec"),
        reporting=Reporting.NOTHING_TO_CHECK,
        at_rest=_NOTHING_AT_REST,
    ),
    _r(
        "CJ-003",
        "cronjob",
        "jobTemplate selector is generated, manualSelector unsupported",
        source=f"{_VALIDATION}: ValidateJobTemplateSpec",
        checked_in=_in("cronjob_template", "validate_job_template_spec"),
        at_rest=_STORED_TEMPLATE,
    ),
    _r(
        "CJ-004",
        "cronjob",
        "no Job status rules on CronJobs",
        source=f"{_VALIDATION}: ValidateCronJobUpdate (a CronJob has no Job status)",
        checked_in=_in("cronjob_template", "validate_job_template_spec"),
        reporting=Reporting.NOTHING_TO_CHECK,
        at_rest=_NOTHING_AT_REST,
    ),
    _r(
        "CJ-005",
        "cronjob",
        "jobTemplate may be suspended; Job spec checks on jobTemplate",
        source=f"{_VALIDATION}: ValidateJobTemplateSpec (validateJobSpec)",
        checked_in=_in("cronjob_template", "_as_cronjob_rule"),
        at_rest=_STORED_TEMPLATE,
    ),
    _r(
        "OM-001",
        "objectmeta",
        "name and generateName are DNS subdomains",
        source="k8s.io/apimachinery pkg/api/validation: ValidateObjectMetaAccessor",
        checked_in=_in("object_names", "validate_object_meta_accessor"),
        at_rest=_CREATE_ONLY,
    ),
    _r(
        "OM-002",
        "objectmeta",
        "CronJob names have at most 52 characters",
        source=f"{_VALIDATION}: ValidateCronJobCreate",
        checked_in=_in("object_names", "validate_cron_job_create"),
        requests=(CRONJOB_CREATE,),
        at_rest=_CREATE_ONLY,
    ),
    _r(
        "OM-003",
        "objectmeta",
        "namespace is a DNS label",
        source="k8s.io/apimachinery pkg/api/validation: ValidateObjectMetaAccessor",
        checked_in=_in("object_names", "validate_object_meta_accessor"),
        at_rest=_CREATE_ONLY,
    ),
    _r(
        "OM-004",
        "objectmeta",
        "owner references name their owner fully, at most one is the controller",
        source="k8s.io/apimachinery pkg/api/validation: ValidateOwnerReferences",
        checked_in=_in("object_names", "validate_owner_reference", "validate_owner_references"),
        requests=REQUESTS,
        at_rest=_holds(
            "the API server judges the owner references on every write, the status's included"
        ),
    ),
    _r(
        "OM-005",
        "objectmeta",
        "finalizers are qualified names, standard or domain-qualified; none added while deleting",
        source=(
            "k8s.io/apimachinery pkg/api/validation: ValidateFinalizers, ValidateNoNewFinalizers; "
            f"{_CORE}: validateKubeFinalizerName"
        ),
        checked_in=(
            *_in("object_names", "validate_finalizers", "validate_kube_finalizer_name"),
            *_in("metadata_update", "validate_no_new_finalizers"),
        ),
        requests=REQUESTS,
        at_rest=_holds("the API server judges the finalizer names on every write"),
    ),
    _r(
        "CS-001",
        "cronjobspec",
        "schedule is required and parses as a cron schedule, without TZ",
        source=f"{_VALIDATION}: validateCronJobSpec, validateScheduleFormat; robfig/cron v3",
        checked_in=_in("cronjob_schedule", "validate_schedule_format"),
        at_rest=_STORED_CRONJOB_SPEC,
    ),
    _r(
        "CS-002",
        "cronjobspec",
        "timeZone is a known IANA time zone",
        source=f"{_VALIDATION}: validateTimeZone",
        checked_in=_in("cronjob_schedule", "validate_time_zone"),
        at_rest=_STORED_CRONJOB_SPEC,
    ),
    _r(
        "CS-003",
        "cronjobspec",
        "concurrencyPolicy is Allow, Forbid or Replace",
        source=f"{_VALIDATION}: validateConcurrencyPolicy",
        checked_in=_in("cronjob_schedule", "validate_concurrency_policy"),
        at_rest=_STORED_CRONJOB_SPEC,
    ),
    _r(
        "CS-004",
        "cronjobspec",
        "startingDeadlineSeconds and history limits are non-negative",
        source=f"{_VALIDATION}: validateCronJobSpec",
        checked_in=_in("cronjob_schedule", "validate_nonnegative_fields"),
        at_rest=_STORED_CRONJOB_SPEC,
    ),
    _r(
        "POD-001",
        "pod",
        "the pod template has containers",
        source=f"{_CORE}: validateContainers",
        checked_in=_in("pod", "validate_containers"),
        at_rest=_STORED_SPEC,
    ),
    _r(
        "POD-002",
        "pod",
        "container names are DNS labels, unique across every kind of container",
        source=f"{_CORE}: validateContainerCommon, validateContainers, validateInitContainers,"
        " validateEphemeralContainers",
        checked_in=_in(
            "pod",
            "validate_container_common",
            "validate_containers",
            "validate_init_containers",
            "validate_ephemeral_containers",
        ),
        at_rest=_STORED_SPEC,
    ),
    _r(
        "POD-003",
        "pod",
        "containers have an image (an ephemeral container's without surrounding whitespace)",
        source=f"{_CORE}: validateContainerCommon, validateContainerOnlyForPod",
        checked_in=_in("pod", "validate_container_common", "validate_ephemeral_containers"),
        at_rest=_STORED_SPEC,
    ),
    _r(
        "POD-004",
        "pod",
        "imagePullPolicy is Always, IfNotPresent or Never",
        source=f"{_CORE}: validatePullPolicy",
        checked_in=_in("pod", "validate_container_common"),
        at_rest=_STORED_SPEC,
    ),
    _r(
        "POD-005",
        "pod",
        "container ports in range, names valid and unique, host ports not reused",
        source=f"{_CORE}: validateContainerPorts, AccumulateUniqueHostPorts",
        checked_in=_in("pod", "validate_container_ports", "check_host_port_conflicts"),
        at_rest=_STORED_SPEC,
    ),
    _r(
        "POD-006",
        "pod",
        "environment variable names",
        source=f"{_CORE}: ValidateEnv (IsRelaxedEnvVarName)",
        checked_in=_in("pod_containers", "validate_env"),
        at_rest=_STORED_SPEC,
    ),
    _r(
        "POD-007",
        "pod",
        "volume names are DNS labels and unique",
        source=f"{_CORE}: ValidateVolumes",
        checked_in=_in("pod", "validate_volumes"),
        at_rest=_STORED_SPEC,
    ),
    _r(
        "POD-008",
        "pod",
        "volume mounts name a volume and have a unique mountPath",
        source=f"{_CORE}: ValidateVolumeMounts",
        checked_in=_in("pod_containers", "validate_volume_mounts"),
        at_rest=_STORED_SPEC,
    ),
    _r(
        "POD-009",
        "pod",
        "resource names and quantities",
        source=f"{_CORE}: validateResourceRequirements, validateContainerResourceName, "
        "validatePodResourceName, ValidateResourceQuantityValue, validateOverhead; k8s.io/apimachinery pkg/api/resource: ParseQuantity",
        checked_in=_in(
            "pod", "_resource_name_errors", "validate_resource_quantity_value", "_parsed"
        ),
        at_rest=_STORED_SPEC,
    ),
    _r(
        "POD-010",
        "pod",
        "requests do not exceed limits (equal where overcommit is not allowed)",
        source=f"{_CORE}: validateResourceRequirements, validatePodResources, validatePodResourceConsistency (pod-level resources, from 1.34)",
        checked_in=_in(
            "pod",
            "_validate_resource_requirements",
            "_request_against_limit",
            "validate_pod_resources",
            "validate_pod_resource_consistency",
        ),
        at_rest=_STORED_SPEC,
    ),
    _r(
        "POD-011",
        "pod",
        "probes and lifecycle handlers: exactly one valid handler, thresholds, liveness and startup successThreshold 1",
        source=f"{_CORE}: validateLivenessProbe, validateReadinessProbe, validateStartupProbe, validateProbe, validateHandler, validateExecAction, validateHTTPGetAction, ValidatePortNumOrName, validateTCPSocketAction, validateGRPCAction, validateSleepAction, validateLifecycle",
        checked_in=_in(
            "pod_containers",
            "validate_port_num_or_name",
            "validate_handler",
            "validate_probe",
        ),
        at_rest=_STORED_SPEC,
    ),
    _r(
        "POD-012",
        "pod",
        "init containers, sidecars and container restart policies: probes and lifecycle only on sidecars (restartPolicy Always)",
        source=f"{_CORE}: validateInitContainers, validateInitContainerRestartPolicy, validateContainerRestartPolicy, validateContainers",
        checked_in=_in(
            "pod_containers",
            "_restart_rules",
            "validate_container_restart_policy",
            "validate_init_container_restart_policy",
        )
        + _in("pod", "validate_containers", "validate_init_containers"),
        at_rest=_STORED_SPEC,
    ),
    _r(
        "POD-013",
        "pod",
        "container resize policies",
        source=f"{_CORE}: validateResizePolicy, validateInitContainers",
        checked_in=_in("pod_containers", "validate_resize_policy")
        + _in("pod", "validate_init_containers"),
        at_rest=_STORED_SPEC,
    ),
    _r(
        "POD-014",
        "pod",
        "environment variable sources (valueFrom) and envFrom",
        source=f"{_CORE}: validateEnvVarValueFrom, validateObjectFieldSelector, validateContainerResourceFieldSelector, validateContainerResourceDivisor, validateConfigMapKeySelector, validateSecretKeySelector, validateFileKeySelector, validateFileKeyRefVolumes, ValidateEnvFrom, validateConfigMapEnvSource, validateSecretEnvSource",
        checked_in=_in(
            "pod_containers",
            "validate_key_selector",
            "validate_file_key_selector",
            "validate_env_var_value_from",
            "validate_env_from",
            "validate_file_key_ref_volumes",
        ),
        at_rest=_STORED_SPEC,
    ),
    _r(
        "POD-015",
        "pod",
        "volume sources: one per volume, each valid (configMap, secret, emptyDir, hostPath, persistentVolumeClaim, projected (with its clusterTrustBundle and podCertificate sources), downwardAPI, csi, ephemeral, nfs, gitRepo, image, and the legacy in-tree sources: iscsi, fc, rbd, cephfs, cinder, glusterfs, flocker, quobyte, flexVolume, azureFile, azureDisk, gcePersistentDisk, awsElasticBlockStore, vsphereVolume, photonPersistentDisk, portworxVolume, scaleIO, storageos)",
        source=f"{_CORE}: validateVolumeSource, validateHostPathVolumeSource, validateGitRepoVolumeSource, validateSecretVolumeSource, validateConfigMapVolumeSource, validateKeyToPath, ValidateLocalNonReservedPath, validateNFSVolumeSource, validatePersistentClaimVolumeSource, validateDownwardAPIVolumeSource, validateDownwardAPIVolumeFile, validateProjectedVolumeSource, validateProjectionSources, ValidateSignerName, ValidateClusterTrustBundleName, ValidateUserAnnotations, validateUserField, validateCSIVolumeSource, validateEphemeralVolumeSource, ValidatePersistentVolumeClaimTemplate, ValidateTemplateObjectMeta, ValidatePersistentVolumeClaimSpec, validateDataSource, validateDataSourceRef, validateImageVolumeSource, validateISCSIVolumeSource, validateFCVolumeSource, validateGCEPersistentDiskVolumeSource, validateAWSElasticBlockStoreVolumeSource, validateQuobyteVolumeSource, validateGlusterfsVolumeSource, validateFlockerVolumeSource, validateRBDVolumeSource, validateCinderVolumeSource, validateCephFSVolumeSource, validateFlexVolumeSource, validateAzureFile, validateAzureDisk, validateVsphereVolumeSource, validatePhotonPersistentDiskVolumeSource, validatePortworxVolumeSource, validateScaleIOVolumeSource, validateStorageOSVolumeSource",
        checked_in=_in(
            "pod_volumes",
            "validate_volume_source",
            "_validate_empty_dir",
            "validate_host_path_volume_source",
            "validate_git_repo_volume_source",
            "_validate_named_volume_source",
            "validate_key_to_path",
            "validate_nfs_volume_source",
            "validate_persistent_claim_volume_source",
            "validate_downward_api_volume_source",
            "validate_downward_api_volume_file",
            "validate_projected_volume_source",
            "validate_csi_volume_source",
            "validate_ephemeral_volume_source",
            "validate_persistent_volume_claim_template",
            "validate_template_object_meta",
            "validate_data_source",
            "validate_image_volume_source",
        )
        + _in(
            "pod_volume_sources",
            "validate_iscsi_volume_source",
            "validate_iscsi_volume_name",
            "validate_fc_volume_source",
            "validate_gce_persistent_disk_volume_source",
            "validate_aws_elastic_block_store_volume_source",
            "validate_quobyte_volume_source",
            "validate_glusterfs_volume_source",
            "validate_flocker_volume_source",
            "validate_rbd_volume_source",
            "validate_cinder_volume_source",
            "validate_ceph_fs_volume_source",
            "validate_flex_volume_source",
            "validate_azure_file",
            "validate_azure_disk",
            "validate_vsphere_volume_source",
            "validate_photon_persistent_disk_volume_source",
            "validate_portworx_volume_source",
            "validate_scale_io_volume_source",
            "validate_storage_os_volume_source",
        )
        + _in(
            "pod_projections",
            "validate_user_annotations",
            "validate_local_non_reserved_path",
            "validate_user_field",
            "validate_signer_name",
            "is_domain_prefixed_key",
            "_claim_path",
            "validate_cluster_trust_bundle_projection",
            "validate_pod_certificate_projection",
        ),
        at_rest=_STORED_SPEC,
    ),
    _r(
        "POD-016",
        "pod",
        "volume mounts (subPath, subPathExpr, mountPropagation, recursiveReadOnly) and volume devices",
        source=f"{_CORE}: ValidateVolumeMounts, validateMountPropagation, validateMountRecursiveReadOnly, ValidateVolumeDevices",
        checked_in=_in(
            "pod_containers",
            "validate_volume_mounts",
            "validate_mount_recursive_read_only",
            "validate_volume_devices",
        ),
        at_rest=_STORED_SPEC,
    ),
    _r(
        "POD-017",
        "pod",
        "terminationMessagePolicy, host ports under hostNetwork, ephemeral containers' fields and"
        " targets, no ephemeral containers in a template",
        source=f"{_CORE}: validateContainerCommon, validatePodHostNetworkDeps,"
        " validateEphemeralContainers, ValidatePodTemplateSpec",
        checked_in=_in(
            "pod_containers",
            "validate_termination_message_policy",
            "validate_pod_host_network_deps",
            "validate_no_ephemeral_containers_in_template",
        )
        + _in("pod", "validate_ephemeral_containers"),
        at_rest=_STORED_SPEC,
    ),
    _r(
        "POD-018",
        "pod",
        "pod and container security contexts, user namespaces",
        source=f"{_CORE}: validatePodSpecSecurityContext, validateSysctls, ValidateHostSysctl, validateFSGroupChangePolicy, validateSupplementalGroupsPolicy, validateSELinuxChangePolicy, ValidateSecurityContext, ValidateProcMountType, validateSeccompProfileField, ValidateAppArmorProfileField, validateWindowsSecurityContextOptions, validateWindowsHostProcessPod, validateShareProcessNamespace, validateHostUsers",
        checked_in=_in(
            "pod_security",
            "_id",
            "validate_seccomp_profile_field",
            "validate_app_armor_profile_field",
            "validate_pod_spec_security_context",
            "_enum",
            "validate_security_context",
            "validate_windows_security_context_options",
            "validate_windows_host_process_pod",
            "validate_share_process_namespace",
            "validate_host_users",
        ),
        at_rest=_STORED_SPEC,
    ),
    _r(
        "POD-019",
        "pod",
        "the pod's OS and the fields a Linux or Windows pod may not set",
        source=f"{_CORE}: validateOS, validateLinux, validateWindows",
        checked_in=_in("pod_security", "validate_os"),
        at_rest=_STORED_SPEC,
    ),
    _r(
        "POD-020",
        "pod",
        "nodeSelector and affinity",
        source=f"{_CORE}: ValidateLabels (nodeSelector), validateAffinity, ValidateNodeSelector, ValidateNodeSelectorTerm, ValidateNodeSelectorRequirement, ValidateNodeFieldSelectorRequirement, ValidatePreferredSchedulingTerms, validatePodAffinityTerm, validateWeightedPodAffinityTerms, ValidatePodAffinityTermSelector, ValidateMatchLabelKeysAndMismatchLabelKeys",
        checked_in=_in(
            "pod_scheduling",
            "validate_node_selector_labels",
            "validate_node_selector_requirement",
            "validate_node_field_selector_requirement",
            "_weight",
            "validate_node_affinity",
            "validate_pod_affinity_term",
        ),
        at_rest=_STORED_SPEC,
    ),
    _r(
        "POD-021",
        "pod",
        "tolerations, the field's and the tolerations annotation's",
        source=f"{_CORE}: ValidateTolerations, validateTaintEffect",
        checked_in=_in("pod_scheduling", "validate_tolerations", "_comparison_value"),
        at_rest=_STORED_SPEC,
    ),
    _r(
        "POD-022",
        "pod",
        "topology spread constraints",
        source=f"{_CORE}: validateTopologySpreadConstraints, validateMinDomains, ValidateTopologyKey, ValidateWhenUnsatisfiable, ValidateSpreadConstraintNotRepeat, validateNodeInclusionPolicy, ValidateMatchLabelKeysInTopologySpread",
        checked_in=_in(
            "pod_scheduling", "validate_topology_spread_constraints", "_spread_match_label_keys"
        ),
        at_rest=_STORED_SPEC,
    ),
    _r(
        "POD-023",
        "pod",
        "dnsPolicy, dnsConfig, hostAliases, hostname, subdomain and hostnameOverride",
        source=f"{_CORE}: validateDNSPolicy, validatePodDNSConfig, ValidateHostAliases, IsValidIPForLegacyField, ValidateDNS1123Label, validatePodHostName",
        checked_in=_in(
            "pod_dns",
            "validate_dns_policy",
            "validate_pod_dns_config",
            "validate_pod_host_name",
            "validate_hostname_and_subdomain",
            "validate_host_aliases",
        ),
        at_rest=_STORED_SPEC,
    ),
    _r(
        "POD-024",
        "pod",
        "the pod's scalar fields: restartPolicy, serviceAccountName, nodeName, activeDeadlineSeconds, priority and runtime class names, preemptionPolicy, readiness and scheduling gates",
        source=f"{_CORE}: validateRestartPolicy, ValidatePodSpec, ValidateRuntimeClassName, ValidatePreemptionPolicy, validateReadinessGates, validateSchedulingGates",
        checked_in=_in(
            "pod_scheduling",
            "validate_restart_policy",
            "_subdomain_field",
            "validate_readiness_gates",
            "validate_scheduling_gates",
            "validate_service_account_node_name_and_deadline",
            "validate_priority_fields",
        ),
        at_rest=_STORED_SPEC,
    ),
    _r(
        "POD-025",
        "pod",
        "resource claims: the pod's claims name one claim or template each; containers use claims the pod declares",
        source=f"{_CORE}: validatePodResourceClaims, validatePodResourceClaim, validateResourceClaimNames",
        checked_in=_in(
            "pod_resources", "validate_pod_resource_claims", "validate_resource_claim_names"
        ),
        at_rest=_STORED_SPEC,
    ),
    _r(
        "POD-026",
        "pod",
        "pod-specific annotations: mirror-pod, tolerations (read as JSON; the tolerations themselves are POD-021's), pod deletion cost, seccomp and AppArmor annotations, which must agree with the fields and name existing containers",
        source=f"{_CORE}: ValidatePodSpecificAnnotations, ValidateTolerationsInPodAnnotations, ValidateSeccompPodAnnotations, ValidateSeccompProfile, ValidateAppArmorPodAnnotations, validateSeccompAnnotationsAndFields, validateAppArmorAnnotationsAndFieldsMatchOnCreate",
        checked_in=_in(
            "pod_annotations",
            "validate_local_descending_path",
            "validate_seccomp_profile",
            "validate_pod_specific_annotations",
            "validate_seccomp_annotations_and_fields_match",
            "validate_app_armor_annotations_and_fields_match_on_create",
            "validate_tolerations_in_pod_annotations",
        ),
        at_rest=_STORED_SPEC,
    ),
    _r(
        "SC-001",
        "schema",
        "no unknown fields (strict field validation)",
        source="k8s.io/apimachinery strict decoding; the OpenAPI schema of kubernetesVersion",
        checked_in=_in("schema", "_field_errors"),
        at_rest=_MANIFESTS_ONLY,
    ),
    _r(
        "SC-002",
        "schema",
        "field types, enumerations and integer ranges of the OpenAPI schema",
        source="the OpenAPI schema of kubernetesVersion (kube-openapi validation messages)",
        checked_in=_in("schema", "check_schema", "_field_errors"),
        at_rest=_MANIFESTS_ONLY,
    ),
    _r(
        "SC-003",
        "schema",
        "required fields of the OpenAPI schema",
        source="the OpenAPI schema of kubernetesVersion (kube-openapi validation messages)",
        checked_in=_in("schema", "_field_errors"),
        at_rest=_MANIFESTS_ONLY,
    ),
)

RULES_BY_ID: dict[str, RuleInfo] = {rule.id: rule for rule in RULES}
