"""How rules are switched on and enforced: resolved once per configuration, read per request."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from jobguard.validators.catalog import RULES, Enforcement, RuleInfo
from jobguard.validators.globs import glob_match, is_glob
from jobguard.validators.memo import Caches
from jobguard.validators.policy import PolicySet
from jobguard.validators.versions import Semantics


@dataclass(frozen=True, slots=True)
class RuleOverride:
    """One `rules:` entry of the configuration, keyed by a rule ID or a glob."""

    enabled: bool | None = None
    enforcement: Enforcement | None = None
    params: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ResolvedRule:
    info: RuleInfo
    enabled: bool
    enforcement: Enforcement
    params: Mapping[str, Any]


def _resolve(
    info: RuleInfo, default: Enforcement, overrides: tuple[tuple[str, RuleOverride], ...]
) -> ResolvedRule:
    enabled = info.enabled_by_default
    # The configured default applies to every rule that denies by default; informational
    # rules stay warnings, unless everything is rolled out as dryrun.
    if info.default_enforcement is Enforcement.DENY or default is Enforcement.DRYRUN:
        enforcement = default
    else:
        enforcement = info.default_enforcement
    params: dict[str, Any] = {}
    names = [info.id] + [r.id for r in RULES if r.alias_of == info.id]
    # Globs apply in the order written, exact IDs after them, so an exact entry wins.
    ordered = [(p, o) for p, o in overrides if is_glob(p)] + [
        (p, o) for p, o in overrides if not is_glob(p)
    ]
    for pattern, override in ordered:
        if not any(glob_match(name, pattern) for name in names):
            continue
        if override.enabled is not None:
            enabled = override.enabled
        if override.enforcement is not None:
            enforcement = override.enforcement
        params.update(override.params)
    return ResolvedRule(info, enabled, enforcement, params)


@dataclass(frozen=True)
class Settings:
    """Everything the pipeline needs to judge: version semantics and rule resolution."""

    semantics: Semantics = field(default_factory=Semantics.for_version)
    enforcement: Enforcement = Enforcement.DENY
    overrides: tuple[tuple[str, RuleOverride], ...] = ()
    policies: PolicySet = field(default_factory=PolicySet)
    rules: Mapping[str, ResolvedRule] = field(init=False, repr=False, compare=False)
    params: Mapping[str, Mapping[str, Any]] = field(init=False, repr=False, compare=False)
    """Each rule's configured parameters."""
    enforcements: Mapping[str, Enforcement | None] = field(init=False, repr=False, compare=False)
    """Each rule's enforcement, None when it is off: what a request's errors are resolved by."""
    caches: Caches = field(default_factory=Caches, init=False, repr=False, compare=False)
    """What judging under these settings keeps (`memo`): made with them, dropped with them (a
    configuration reload makes new settings)."""

    def __post_init__(self) -> None:
        resolved = {info.id: _resolve(info, self.enforcement, self.overrides) for info in RULES}
        object.__setattr__(self, "rules", resolved)
        object.__setattr__(self, "params", {k: r.params for k, r in resolved.items()})
        enforcements = {k: r.enforcement if r.enabled else None for k, r in resolved.items()}
        object.__setattr__(self, "enforcements", enforcements)

    def rule(self, rule_id: str) -> ResolvedRule:
        return self.rules[rule_id]

    def enabled(self, rule_id: str) -> bool:
        return self.rules[rule_id].enabled
