"""jobguard's rule library: pure Python, no I/O.

Entry point: `evaluate(Request, Settings) -> Verdict`.
"""

from jobguard.validators.catalog import RULES, RULES_BY_ID, Enforcement, RuleInfo
from jobguard.validators.context import Operation, Request, Requester
from jobguard.validators.errors import ErrorType, FieldError
from jobguard.validators.lifecycle import JobState, Transition, classify
from jobguard.validators.pipeline import Mutation, Verdict, Violation, evaluate, mutate
from jobguard.validators.policy import Exemptions, PolicySet, Subjects, SuspendPolicy
from jobguard.validators.settings import RuleOverride, Settings
from jobguard.validators.versions import (
    DEFAULT_VERSION,
    SUPPORTED_VERSIONS,
    Semantics,
    UnsupportedVersionError,
)

__all__ = [
    "DEFAULT_VERSION",
    "RULES",
    "RULES_BY_ID",
    "SUPPORTED_VERSIONS",
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
    "Subjects",
    "SuspendPolicy",
    "Transition",
    "UnsupportedVersionError",
    "Verdict",
    "Violation",
    "classify",
    "evaluate",
    "mutate",
]
