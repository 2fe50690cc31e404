"""jobguard's rule library: pure Python, no I/O.

Entry point: `admit(Request, Settings, stages) -> Admission` (the admission chain: mutation, then
`evaluate(Request, Settings) -> Verdict` on the result).
"""

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
from jobguard.validators.versions import (
    DEFAULT_VERSION,
    SUPPORTED_VERSIONS,
    Semantics,
    UnsupportedVersionError,
)

__all__ = [
    "BOTH_STAGES",
    "BUILT_IN_EXEMPTIONS",
    "DEFAULT_NAMESPACE",
    "DEFAULT_VERSION",
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
    "Verdict",
    "Violation",
    "admit",
    "classify",
    "evaluate",
    "mutate",
    "resolve_namespace",
]
