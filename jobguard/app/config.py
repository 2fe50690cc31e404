"""The configuration file (YAML), parsed into pydantic models, with errors that name the key
path and line. No rule logic: it only turns the file into a `validators.Settings`."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from jobguard.validators import (
    DEFAULT_VERSION,
    RULES_BY_ID,
    Enforcement,
    Exemptions,
    PolicySet,
    RuleOverride,
    Semantics,
    Settings,
    Subjects,
    SuspendPolicy,
    UnsupportedVersionError,
)
from jobguard.validators.model import describe
from jobguard.validators.selectors import validate_selector

CONFIG_ENV = "JOBGUARD_CONFIG"
VERSION_ENV = "JOBGUARD_KUBERNETES_VERSION"


class ConfigError(ValueError):
    """A configuration that cannot be used; the message names the key path and line."""


class RuleEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    enabled: bool | None = None
    enforcement: Enforcement | None = Field(None, strict=False)
    params: dict[str, Any] = Field(default_factory=dict)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class SubjectsConfig(_Strict):
    users: list[str] = Field(default_factory=list)
    groups: list[str] = Field(default_factory=list)
    service_accounts: list[str] = Field(default_factory=list, alias="serviceAccounts")

    @field_validator("service_accounts")
    @classmethod
    def _namespaced(cls, value: list[str]) -> list[str]:
        for entry in value:
            namespace, sep, name = entry.partition(":")
            if not sep or not namespace or not name or ":" in name:
                raise ValueError(f'{entry!r} is not "namespace:name"')
        return value

    def to_subjects(self) -> Subjects:
        return Subjects(tuple(self.users), tuple(self.groups), tuple(self.service_accounts))


class ExemptionsConfig(SubjectsConfig):
    namespaces: list[str] = Field(default_factory=list)

    def to_exemptions(self) -> Exemptions:
        return Exemptions(tuple(self.namespaces), self.to_subjects())


class LabelSelectorRequirementConfig(_Strict):
    key: str
    operator: str
    values: list[str] | None = None


class LabelSelectorConfig(_Strict):
    match_labels: dict[str, str] | None = Field(None, alias="matchLabels")
    match_expressions: list[LabelSelectorRequirementConfig] | None = Field(
        None, alias="matchExpressions"
    )

    def as_selector(self) -> dict[str, Any]:
        return self.model_dump(by_alias=True, exclude_none=True)

    @field_validator("match_expressions")
    @classmethod
    def _usable(
        cls, value: list[LabelSelectorRequirementConfig] | None
    ) -> list[LabelSelectorRequirementConfig] | None:
        raw = {"matchExpressions": [r.model_dump(exclude_none=True) for r in value or []]}
        problems = validate_selector("config", raw, "labelSelector")
        if problems:
            raise ValueError(problems[0].message())
        return value


class MatchConfig(_Strict):
    namespaces: list[str] | None = None
    label_selector: LabelSelectorConfig | None = Field(None, alias="labelSelector")


class SuspendPolicyConfig(_Strict):
    name: str = Field(min_length=1)
    match: MatchConfig = Field(default_factory=MatchConfig)
    force_suspend_on_create: bool = Field(False, alias="forceSuspendOnCreate")
    controllers: SubjectsConfig = Field(default_factory=SubjectsConfig)
    users_may_suspend: bool = Field(True, alias="usersMaySuspend")

    def to_policy(self) -> SuspendPolicy:
        selector = self.match.label_selector
        return SuspendPolicy(
            name=self.name,
            namespaces=tuple(self.match.namespaces) if self.match.namespaces is not None else None,
            label_selector=selector.as_selector() if selector is not None else None,
            force_suspend_on_create=self.force_suspend_on_create,
            controllers=self.controllers.to_subjects(),
            users_may_suspend=self.users_may_suspend,
        )


class FileConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    kubernetes_version: str = Field(DEFAULT_VERSION, alias="kubernetesVersion")
    enforcement: Enforcement = Enforcement.DENY
    rules: dict[str, RuleEntry] = Field(default_factory=dict)
    exemptions: ExemptionsConfig = Field(default_factory=ExemptionsConfig)
    suspend_policies: list[SuspendPolicyConfig] = Field(
        default_factory=list, alias="suspendPolicies"
    )

    @field_validator("suspend_policies")
    @classmethod
    def _unique_names(cls, value: list[SuspendPolicyConfig]) -> list[SuspendPolicyConfig]:
        names = [p.name for p in value]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"policy names must be unique: {', '.join(duplicates)}")
        return value

    @field_validator("kubernetes_version", mode="before")
    @classmethod
    def _known_version(cls, value: Any) -> str:
        if not isinstance(value, str):
            raise ValueError(str(UnsupportedVersionError(value)))
        try:
            Semantics.for_version(value)
        except UnsupportedVersionError as exc:
            raise ValueError(str(exc)) from None
        return value

    @field_validator("rules")
    @classmethod
    def _known_rules(cls, value: dict[str, RuleEntry]) -> dict[str, RuleEntry]:
        import fnmatch

        for pattern in value:
            if not any(fnmatch.fnmatchcase(rule_id, pattern) for rule_id in RULES_BY_ID):
                raise ValueError(f"{pattern!r} matches no rule ID")
        return value

    def to_settings(self) -> Settings:
        overrides = tuple(
            (pattern, RuleOverride(entry.enabled, entry.enforcement, dict(entry.params)))
            for pattern, entry in self.rules.items()
        )
        return Settings(
            semantics=Semantics.for_version(self.kubernetes_version),
            enforcement=self.enforcement,
            overrides=overrides,
            policies=PolicySet(
                exemptions=self.exemptions.to_exemptions(),
                policies=tuple(p.to_policy() for p in self.suspend_policies),
            ),
        )


def _line_of(root: yaml.Node | None, loc: tuple[int | str, ...]) -> int | None:
    """1-based line of the YAML node at `loc` (or of its nearest existing ancestor)."""
    node = root
    line = node.start_mark.line + 1 if node is not None else None
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            match = next((v for k, v in node.value if getattr(k, "value", None) == part), None)
        elif (
            isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value)
        ):
            match = node.value[part]
        else:
            match = None
        if match is None:
            break
        node = match
        line = node.start_mark.line + 1
    return line


def _path_text(loc: tuple[int | str, ...]) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(root)"


def parse_config(text: str, source: str = "<config>") -> FileConfig:
    """Parse configuration text; ConfigError names the source, key path and line."""
    try:
        data = yaml.safe_load(text)
        root = yaml.compose(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{source}:{mark.line + 1}" if mark is not None else source
        raise ConfigError(f"{where}: not valid YAML: {getattr(exc, 'problem', exc)}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{source}:1: the configuration must be a mapping")
    try:
        return FileConfig.model_validate(data)
    except ValidationError as exc:
        # Every problem at once, one line each; wrong types worded as for objects.
        lines = []
        for error in exc.errors(include_url=False):
            loc = tuple(error["loc"])
            path = _path_text(loc)
            line = _line_of(root, loc[:-1] if error["type"] == "missing" else loc)
            where = f"{source}:{line}" if line else source
            problem = describe(error)
            if problem.type_error:
                message = problem.detail.removeprefix(f"{problem.field} in body ")
            else:
                message = str(error["msg"]).removeprefix("Value error, ")
            lines.append(f"{where}: {path}: {message}")
        raise ConfigError("\n".join(lines)) from None


def load_config(path: str | None = None) -> FileConfig:
    """The configuration from `path`, else $JOBGUARD_CONFIG, else the defaults.

    $JOBGUARD_KUBERNETES_VERSION overrides nothing set in a file; it sets the version when no
    file is used.
    """
    path = path or os.environ.get(CONFIG_ENV) or None
    if path is None:
        version = os.environ.get(VERSION_ENV)
        return parse_config(f"kubernetesVersion: {version!r}\n" if version else "", VERSION_ENV)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
    return parse_config(text, path)
