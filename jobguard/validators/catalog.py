"""Every rule jobguard knows, with its stable ID.

IDs and field paths follow the rule catalogue (RULES.md); `JS-` rules are the create-style Job
spec checks of upstream `validateJobSpec` that the catalogue refers to without an ID; `NE-` rules
are not enforced upstream and are off unless configured.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Enforcement(StrEnum):
    DENY = "deny"
    WARN = "warn"
    DRYRUN = "dryrun"


@dataclass(frozen=True, slots=True)
class RuleInfo:
    id: str
    area: str
    summary: str
    upstream: bool = True
    """Enforced by the API server itself (on by default); False for policy-only rules."""
    default_enforcement: Enforcement = Enforcement.DENY
    alias_of: str | None = None
    """Another ID that reports this rule's errors (the same upstream check)."""
    default_enabled: bool | None = None
    """On unless configured off; None means: on exactly when `upstream`."""

    @property
    def enabled_by_default(self) -> bool:
        return self.upstream if self.default_enabled is None else self.default_enabled


def _r(rule_id: str, area: str, summary: str, **kwargs: object) -> RuleInfo:
    return RuleInfo(rule_id, area, summary, **kwargs)  # type: ignore[arg-type]


_WARN = Enforcement.WARN

RULES: tuple[RuleInfo, ...] = (
    _r("DEC-001", "decoding", "the object can be read as its kind (field types)"),
    _r("TM-001", "template", "pod template is immutable on update"),
    _r("TM-002", "template", "scheduling directives are mutable while safely suspended"),
    _r("TM-003", "template", "container resources are mutable while safely suspended (KEP-5440)"),
    _r("TM-004", "template", "relaxations follow the old spec.suspend"),
    _r("TM-005", "template", "generated job-name/controller-uid labels and selector"),
    _r("TM-006", "template", "selector must select the template labels"),
    _r("TM-007", "template", "selector is required"),
    _r("IM-001", "immutability", "spec.selector is immutable"),
    _r(
        "IM-002",
        "immutability",
        "spec.completions is immutable (Indexed: in tandem with parallelism)",
    ),
    _r("IM-003", "immutability", "spec.completionMode is immutable"),
    _r("IM-004", "immutability", "spec.podFailurePolicy is immutable"),
    _r("IM-005", "immutability", "spec.backoffLimitPerIndex is immutable"),
    _r("IM-006", "immutability", "spec.managedBy is immutable"),
    _r("IM-007", "immutability", "spec.successPolicy is immutable"),
    _r("IM-008", "immutability", "object metadata update rules"),
    _r("JS-001", "jobspec", "counts and durations are non-negative"),
    _r("JS-002", "jobspec", "completionMode and podReplacementPolicy take known values"),
    _r("JS-003", "jobspec", "Indexed jobs need completions"),
    _r("JS-004", "jobspec", "backoffLimitPerIndex / maxFailedIndexes constraints"),
    _r(
        "JS-005",
        "jobspec",
        "pod template restartPolicy is OnFailure or Never (Never with podFailurePolicy)",
    ),
    _r("JS-006", "jobspec", "managedBy is a short domain-prefixed path"),
    _r("JS-007", "jobspec", "Indexed pod hostnames are valid DNS labels"),
    _r("JS-008", "jobspec", "podFailurePolicy rules are well formed"),
    _r("SP-001", "successPolicy", "successPolicy requires Indexed completion mode"),
    _r("SP-002", "successPolicy", "successPolicy needs at least one rule"),
    _r("SP-003", "successPolicy", "successPolicy has at most 20 rules"),
    _r("SP-004", "successPolicy", "each rule sets succeededIndexes or succeededCount"),
    _r("SP-005", "successPolicy", "succeededIndexes is at most 64 KiB"),
    _r("SP-006", "successPolicy", "succeededIndexes follows the interval grammar"),
    _r("SP-007", "successPolicy", "succeededCount is non-negative"),
    _r("SP-008", "successPolicy", "succeededCount <= completions"),
    _r("SP-009", "successPolicy", "succeededCount <= size of succeededIndexes"),
    _r(
        "SP-010",
        "successPolicy",
        "successPolicy is immutable (reported as IM-007)",
        alias_of="IM-007",
    ),
    _r("ST-001", "status", "status.active >= 0"),
    _r("ST-002", "status", "status.succeeded >= 0"),
    _r("ST-003", "status", "status.failed >= 0"),
    _r("ST-004", "status", "status.ready >= 0"),
    _r("ST-005", "status", "status.terminating >= 0"),
    _r("ST-006", "status", "uncountedTerminatedPods UIDs non-empty and unique"),
    _r("ST-007", "status", "not SuccessCriteriaMet and Failed"),
    _r("ST-008", "status", "not SuccessCriteriaMet and FailureTarget"),
    _r("ST-009", "status", "Complete needs SuccessCriteriaMet when successPolicy is set"),
    _r("ST-010", "status", "SuccessCriteriaMet cannot be removed"),
    _r("ST-011", "status", "SuccessCriteriaMet cannot follow Complete"),
    _r("ST-020", "status", "succeeded counter does not decrease"),
    _r("ST-021", "status", "failed counter does not decrease"),
    _r("ST-022", "status", "terminal conditions are sticky"),
    _r("ST-023", "status", "completedIndexes grammar"),
    _r("ST-024", "status", "failedIndexes grammar"),
    _r("ST-025", "status", "completedIndexes only for Indexed jobs"),
    _r("ST-026", "status", "failedIndexes needs backoffLimitPerIndex"),
    _r("ST-027", "status", "failedIndexes and completedIndexes do not overlap"),
    _r("ST-028", "status", "Failed needs FailureTarget"),
    _r("ST-029", "status", "Complete needs SuccessCriteriaMet"),
    _r("ST-030", "status", "finished jobs have no active pods"),
    _r("ST-031", "status", "finished jobs have a startTime"),
    _r("ST-032", "status", "finished jobs have no uncounted terminated pods"),
    _r("ST-033", "status", "startTime is fixed unless suspended"),
    _r("ST-034", "status", "completionTime is not before startTime"),
    _r("ST-035", "status", "completionTime is immutable"),
    _r("ST-036", "status", "completionTime needs Complete"),
    _r("ST-037", "status", "Complete needs completionTime"),
    _r("ST-038", "status", "not Complete and Failed"),
    _r("ST-039", "status", "not Complete and FailureTarget"),
    _r("ST-040", "status", "ready <= active"),
    _r("ST-041", "status", "finished jobs have no terminating pods"),
    _r(
        "NE-001",
        "suspend",
        "a finished Job cannot be suspended",
        upstream=False,
        default_enabled=True,
    ),
    _r(
        "NE-002",
        "suspend",
        "the Suspended condition is flipped to False, never removed",
        upstream=False,
        default_enabled=True,
    ),
    _r("NE-003", "suspend", "Suspended=True only once no pods are active", upstream=False),
    _r(
        "NE-004",
        "suspend",
        "startTime is not set while suspended",
        upstream=False,
        default_enforcement=_WARN,
    ),
    _r(
        "NE-005",
        "suspend",
        "activeDeadlineSeconds restarts on resume",
        upstream=False,
        default_enforcement=_WARN,
    ),
    _r(
        "NE-006",
        "suspend",
        "suspending a running Job deletes its active pods",
        upstream=False,
        default_enforcement=_WARN,
    ),
    _r("NE-007", "suspend", "only configured requesters may change spec.suspend", upstream=False),
    _r("NE-008", "suspend", "no terminal condition while Suspended=True", upstream=False),
    _r(
        "NE-009",
        "suspend",
        "scheduling directives of a Job that already ran",
        upstream=False,
        default_enforcement=_WARN,
    ),
    _r(
        "SUS-001",
        "policy",
        "matched Jobs are created suspended (except by controllers)",
        upstream=False,
        default_enabled=True,
    ),
    _r(
        "SUS-002",
        "policy",
        "only controllers resume matched Jobs",
        upstream=False,
        default_enabled=True,
    ),
    _r(
        "SUS-003",
        "policy",
        "only controllers suspend matched Jobs unless usersMaySuspend",
        upstream=False,
        default_enabled=True,
    ),
    _r(
        "SUS-004",
        "policy",
        "only controllers change scheduling directives of matched Jobs",
        upstream=False,
        default_enabled=True,
    ),
    _r(
        "SUS-005",
        "policy",
        "an unfinished matched Job cannot be relabelled out of its policy",
        upstream=False,
        default_enabled=True,
    ),
    _r("CJ-001", "cronjob", "successPolicy rules on spec.jobTemplate.spec"),
    _r("CJ-002", "cronjob", "jobTemplate is freely mutable"),
    _r("CJ-003", "cronjob", "jobTemplate selector is generated, manualSelector unsupported"),
    _r("CJ-004", "cronjob", "no Job status rules on CronJobs"),
    _r("CJ-005", "cronjob", "jobTemplate may be suspended; Job spec checks on jobTemplate"),
)

RULES_BY_ID: dict[str, RuleInfo] = {rule.id: rule for rule in RULES}
