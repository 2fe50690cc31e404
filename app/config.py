"""The configuration file (YAML), parsed into pydantic models, with errors that name the key
path and line. No rule logic: it only turns the file into a `validators.Settings`."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from validators import (
    DEFAULT_VERSION,
    RULES_BY_ID,
    Enforcement,
    RuleOverride,
    Semantics,
    Settings,
    UnsupportedVersionError,
)

CONFIG_ENV = "JOBGUARD_CONFIG"
VERSION_ENV = "JOBGUARD_KUBERNETES_VERSION"


class ConfigError(ValueError):
    """A configuration that cannot be used; the message names the key path and line."""


class RuleEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    enabled: bool | None = None
    enforcement: Enforcement | None = Field(None, strict=False)
    params: dict[str, Any] = Field(default_factory=dict)


class FileConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    kubernetes_version: str = Field(DEFAULT_VERSION, alias="kubernetesVersion")
    enforcement: Enforcement = Enforcement.DENY
    rules: dict[str, RuleEntry] = Field(default_factory=dict)

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
        first = exc.errors(include_url=False)[0]
        loc = tuple(first["loc"])
        path = ".".join(str(p) for p in loc) or "(root)"
        line = _line_of(root, loc)
        where = f"{source}:{line}" if line else source
        message = str(first["msg"]).removeprefix("Value error, ")
        raise ConfigError(f"{where}: {path}: {message}") from None


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
