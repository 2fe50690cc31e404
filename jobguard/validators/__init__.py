"""jobguard's rule library: pure Python, no I/O.

Entry point: `admit(Request, Settings, stages) -> Admission` (the admission chain: mutation, then
`evaluate(Request, Settings) -> Verdict` on the result). A stored object, judged on its own:
`judge_at_rest(kind, object, Settings) -> Verdict` (built on `admit`). The configuration as
ValidatingAdmissionPolicies: `export_vap(Settings) -> VapExport`.
"""

from jobguard.validators.at_rest import AT_REST, NOT_AT_REST, judge_at_rest
from jobguard.validators.catalog import RULES, RULES_BY_ID, Enforcement, RuleInfo
from jobguard.validators.chain import BOTH_STAGES, Admission, Stage, admit
from jobguard.validators.context import (
    DEFAULT_NAMESPACE,
    Operation,
    Request,
    Requester,
    resolve_namespace,
)
from jobguard.validators.errors import ErrorType, FieldError
from jobguard.validators.lifecycle import JobState, Transition, classify
from jobguard.validators.pipeline import Mutation, Verdict, Violation, evaluate, mutate
from jobguard.validators.policy import (
    BUILT_IN_EXEMPTIONS,
    Exemptions,
    PolicySet,
    Subjects,
    SuspendPolicy,
)
from jobguard.validators.settings import RuleOverride, Settings
from jobguard.validators.vap import VapExport, export_vap
from jobguard.validators.versions import (
    AUTO_VERSION,
    DEFAULT_VERSION,
    SUPPORTED_VERSIONS,
    Semantics,
    UnsupportedVersionError,
    VersionChoice,
    choose_version,
)

__all__ = [
    "AT_REST",
    "AUTO_VERSION",
    "BOTH_STAGES",
    "BUILT_IN_EXEMPTIONS",
    "DEFAULT_NAMESPACE",
    "DEFAULT_VERSION",
    "NOT_AT_REST",
    "RULES",
    "RULES_BY_ID",
    "SUPPORTED_VERSIONS",
    "Admission",
    "Enforcement",
    "ErrorType",
    "Exemptions",
    "FieldError",
    "JobState",
    "Mutation",
    "Operation",
    "PolicySet",
    "Request",
    "Requester",
    "RuleInfo",
    "RuleOverride",
    "Semantics",
    "Settings",
    "Stage",
    "Subjects",
    "SuspendPolicy",
    "Transition",
    "UnsupportedVersionError",
    "VapExport",
    "Verdict",
    "VersionChoice",
    "Violation",
    "admit",
    "choose_version",
    "classify",
    "evaluate",
    "export_vap",
    "judge_at_rest",
    "mutate",
    "resolve_namespace",
]
