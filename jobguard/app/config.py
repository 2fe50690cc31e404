"""The configuration file (YAML), parsed into pydantic models, with every error at once, each
naming the line and key path (and a hint where one helps). No rule logic: it only turns the file
into a `validators.Settings`, and says what that Settings is (`effective_config`, `digest`)."""

from __future__ import annotations

import difflib
import hashlib
import os
from dataclasses import dataclass
from typing import Annotated, Any

import orjson
import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from jobguard.app.yaml_shape import shape_problem
from jobguard.validators import (
    BUILT_IN_EXEMPTIONS,
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
from jobguard.validators.globs import (
    NAMESPACE_ALPHABET,
    RULE_ID_ALPHABET,
    glob_match,
    glob_problem,
    is_glob,
)
from jobguard.validators.model import describe
from jobguard.validators.names import dns1123_label_problems
from jobguard.validators.policy import shadowing
from jobguard.validators.selectors import validate_selector
from jobguard.validators.versions import AUTO_VERSION

CONFIG_ENV = "JOBGUARD_CONFIG"
VERSION_ENV = "JOBGUARD_KUBERNETES_VERSION"


RULE_PARAMS: dict[str, frozenset[str]] = {
    rule.id: frozenset(rule.params) for rule in RULES_BY_ID.values() if rule.params
}
"""The parameters each rule takes (lists of strings; the catalogue's `RuleInfo.params`); other
rules take none."""

MAX_CONFIG_BYTES = 1024 * 1024
"""A configuration file's size limit: a ConfigMap holds at most 1 MiB, so no configuration that
can be deployed is larger."""
MAX_DEPTH = 100
"""Nesting levels of mappings and lists (aliases expanded). The deepest valid configuration nests
8 (suspendPolicies[].match.labelSelector.matchExpressions[].values); the parser's own recursion
(one level of Python stack or more each) stays far from the interpreter's limit."""
MAX_NODES = 20_000
"""Mappings, lists and scalars, aliases expanded: a large configuration holds a few thousand, and
a few anchors could otherwise stand for billions (or a pure-Python parse of 1 MiB take a minute)."""

ALL_NAMESPACES = "*"
"""`match.namespaces: ["*"]`: every namespace."""


@dataclass(frozen=True, slots=True)
class ConfigProblem:
    """One reason a configuration cannot be used: `file:line: path: reason (hint)`."""

    source: str
    line: int | None
    path: str
    reason: str
    hint: str = ""

    def __str__(self) -> str:
        where = f"{self.source}:{self.line}" if self.line else self.source
        text = f"{where}: {self.path}: {self.reason}" if self.path else f"{where}: {self.reason}"
        return f"{text}; {self.hint}" if self.hint else text


class ConfigError(ValueError):
    """A configuration that cannot be used: every problem found, one a line."""

    def __init__(self, problems: list[ConfigProblem] | str) -> None:
        if isinstance(problems, str):
            problems = [ConfigProblem(problems, None, "", "")]
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


def _known_rule_pattern(pattern: str) -> str:
    problem = glob_problem(pattern, RULE_ID_ALPHABET)
    if problem is not None:
        raise ValueError(problem)
    if not any(glob_match(rule_id, pattern) for rule_id in RULES_BY_ID):
        raise ValueError(f"{pattern!r} matches no rule ID")
    return pattern


RulePattern = Annotated[str, AfterValidator(_known_rule_pattern)]


def _namespace_pattern(pattern: str) -> str:
    """A namespace name or glob (`validators.globs`): what the server, the registrations and the
    exported policies read alike."""
    problem = glob_problem(pattern, NAMESPACE_ALPHABET)
    if problem is not None:
        raise ValueError(f"not a namespace name or glob: {problem}")
    return pattern


NamespacePattern = Annotated[str, AfterValidator(_namespace_pattern)]


class RuleEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    enabled: bool | None = None
    enforcement: Enforcement | None = Field(None, strict=False)
    params: dict[str, list[str]] = Field(default_factory=dict)


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
    namespaces: list[NamespacePattern] = Field(default_factory=list)
    built_in: bool = Field(True, alias="builtIn", strict=True)
    """Also exempt the built-in controllers and cluster administrators (BUILT_IN_EXEMPTIONS)."""

    def to_exemptions(self) -> Exemptions:
        built_in = BUILT_IN_EXEMPTIONS if self.built_in else Subjects()
        return Exemptions(tuple(self.namespaces), self.to_subjects(), built_in)


_EMPTY_VALUE = (
    "the empty value is never matched: a policy reads a label with an empty value as absent "
    "(as Kueue reads an empty queue name); use DoesNotExist or NotIn to say absent"
)


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

    @field_validator("match_labels")
    @classmethod
    def _no_empty_label(cls, value: dict[str, str] | None) -> dict[str, str] | None:
        for key, label in (value or {}).items():
            if label == "":
                raise ValueError(f"{key}: {_EMPTY_VALUE}")
        return value

    @field_validator("match_expressions")
    @classmethod
    def _usable(
        cls, value: list[LabelSelectorRequirementConfig] | None
    ) -> list[LabelSelectorRequirementConfig] | None:
        for requirement in value or []:
            if "" in (requirement.values or []):
                raise ValueError(f"{requirement.key}: {_EMPTY_VALUE}")
        raw = {"matchExpressions": [r.model_dump(exclude_none=True) for r in value or []]}
        problems = validate_selector("config", raw, "labelSelector")
        if problems:
            raise ValueError(problems[0].message())
        return value


class MatchConfig(_Strict):
    """Which Jobs a policy holds: it must say (a policy that matched everything by omission held
    every Job of every namespace); `namespaces: ["*"]` says every namespace."""

    namespaces: list[NamespacePattern] | None = None
    label_selector: LabelSelectorConfig | None = Field(None, alias="labelSelector")

    @field_validator("namespaces")
    @classmethod
    def _named(cls, value: list[str] | None) -> list[str] | None:
        if value is not None and not value:
            raise ValueError('name at least one namespace, or "*" for every namespace')
        if value is not None and ALL_NAMESPACES in value and len(value) > 1:
            raise ValueError('"*" (every namespace) stands alone')
        return value

    @field_validator("label_selector")
    @classmethod
    def _selects(cls, value: LabelSelectorConfig | None) -> LabelSelectorConfig | None:
        if value is not None and not (value.match_labels or value.match_expressions):
            raise ValueError(
                "an empty labelSelector selects every Job: give matchLabels or "
                'matchExpressions, or leave it out (namespaces: ["*"] for every namespace)'
            )
        return value

    @model_validator(mode="after")
    def _says_something(self) -> MatchConfig:
        if self.namespaces is None and self.label_selector is None:
            raise ValueError(
                'give namespaces or labelSelector (namespaces: ["*"] for every namespace)'
            )
        return self


class ControllersConfig(SubjectsConfig):
    """Who may resume a held Job: at least one user, group or service account."""

    @model_validator(mode="after")
    def _names_someone(self) -> ControllersConfig:
        if not (self.users or self.groups or self.service_accounts):
            raise ValueError(
                "name at least one of users, groups or serviceAccounts (else nobody may resume)"
            )
        return self


def _policy_name(value: str) -> str:
    """A DNS-1123 label: it names the policy's webhooks (`<name>.jobs.<domain>`) and exported
    ValidatingAdmissionPolicies."""
    problems = dns1123_label_problems(value)
    if problems:
        raise ValueError(f"{value!r} is not a DNS-1123 label: {problems[0]}")
    return value


class SuspendPolicyConfig(_Strict):
    name: Annotated[str, AfterValidator(_policy_name)]
    match: MatchConfig
    force_suspend_on_create: bool = Field(False, alias="forceSuspendOnCreate", strict=True)
    controllers: ControllersConfig
    users_may_suspend: bool = Field(True, alias="usersMaySuspend", strict=True)

    def to_policy(self) -> SuspendPolicy:
        selector = self.match.label_selector
        namespaces = self.match.namespaces
        return SuspendPolicy(
            name=self.name,
            namespaces=None if namespaces in (None, [ALL_NAMESPACES]) else tuple(namespaces or ()),
            label_selector=selector.as_selector() if selector is not None else None,
            force_suspend_on_create=self.force_suspend_on_create,
            controllers=self.controllers.to_subjects(),
            users_may_suspend=self.users_may_suspend,
        )


class FileConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    kubernetes_version: str = Field(DEFAULT_VERSION, alias="kubernetesVersion")
    enforcement: Enforcement = Enforcement.DENY
    rules: dict[RulePattern, RuleEntry] = Field(default_factory=dict)
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
        if value == AUTO_VERSION:
            return value  # the cluster's, read at start (jobguard serve, jobguard audit)
        try:
            Semantics.for_version(value)
        except UnsupportedVersionError as exc:
            raise ValueError(str(exc)) from None
        return value

    @property
    def version_is_auto(self) -> bool:
        return self.kubernetes_version == AUTO_VERSION

    def to_settings(self, cluster_version: str | None = None) -> Settings:
        """The settings; `kubernetesVersion: auto` takes `cluster_version` (the supported version
        chosen for the cluster), else the default version."""
        version = self.kubernetes_version
        if version == AUTO_VERSION:
            version = cluster_version or DEFAULT_VERSION
        overrides = tuple(
            (pattern, RuleOverride(entry.enabled, entry.enforcement, dict(entry.params)))
            for pattern, entry in self.rules.items()
        )
        return Settings(
            semantics=Semantics.for_version(version),
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


def _keys_of(model: type[BaseModel]) -> set[str]:
    """Every key the configuration's models accept, for "did you mean" hints."""
    keys: set[str] = set()
    for name, info in model.model_fields.items():
        keys.add(info.alias or name)
        for arg in (*getattr(info.annotation, "__args__", ()), info.annotation):
            if isinstance(arg, type) and issubclass(arg, BaseModel) and arg is not model:
                keys |= _keys_of(arg)
    return keys


def _hint(kind: str, loc: tuple[int | str, ...], value: Any) -> str:
    """A hint for the mistakes people make most: unquoted versions, misspelt keys and IDs."""
    if loc == ("kubernetesVersion",) and isinstance(value, int | float):
        return 'quote it, as in kubernetesVersion: "1.35" (YAML reads an unquoted 1.35 as a number)'
    if kind == "extra_forbidden" and isinstance(loc[-1], str):
        close = difflib.get_close_matches(loc[-1], sorted(_keys_of(FileConfig)), n=1)
        return f"did you mean {close[0]}?" if close else ""
    if len(loc) == 2 and loc[0] == "rules" and isinstance(loc[1], str):
        close = difflib.get_close_matches(loc[1].upper(), list(RULES_BY_ID), n=1)
        return f"did you mean {close[0]}? `jobguard rules` lists them" if close else ""
    return ""


def _validation_problems(
    exc: ValidationError, root: yaml.Node | None, source: str
) -> list[ConfigProblem]:
    problems = []
    for error in exc.errors(include_url=False):
        # Dict keys are reported as (..., key, "[key]"): the path names the key itself.
        loc = tuple(part for part in error["loc"] if part != "[key]")
        line_loc = loc[:-1] if error["type"] == "missing" else loc
        # Wrong types are worded as the API server words them for objects.
        problem = describe(error)
        if problem.type_error:
            reason = problem.detail.removeprefix(f"{problem.field} in body ")
        else:
            reason = str(error["msg"]).removeprefix("Value error, ")
        hint = _hint(error["type"], loc, error.get("input"))
        problems.append(
            ConfigProblem(source, _line_of(root, line_loc), _path_text(loc), reason, hint)
        )
    return problems


def _param_problems(
    data: dict[str, Any], root: yaml.Node | None, source: str
) -> list[ConfigProblem]:
    """Parameters a rule does not take (their types are pydantic's to check)."""
    problems = []
    rules = data.get("rules")
    for pattern, entry in rules.items() if isinstance(rules, dict) else ():
        params = entry.get("params") if isinstance(entry, dict) else None
        if not isinstance(pattern, str) or not isinstance(params, dict):
            continue
        matched = [rule for rule in RULES_BY_ID if glob_match(rule, pattern)]
        accepted = set().union(*(RULE_PARAMS.get(rule, frozenset()) for rule in matched))
        for name in params:
            if name not in accepted:
                takes = ", ".join(sorted(accepted)) or "none"
                loc: tuple[int | str, ...] = ("rules", pattern, "params", str(name))
                problems.append(
                    ConfigProblem(
                        source,
                        _line_of(root, loc),
                        _path_text(loc),
                        f"{pattern} takes no parameter {name!r} (parameters: {takes})",
                    )
                )
    return problems


def _glob_conflicts(config: FileConfig, root: yaml.Node | None, source: str) -> list[ConfigProblem]:
    """Two `rules:` globs that set the same field of a rule to different values, with no exact
    entry for it: the outcome would depend on the order of the keys, which YAML tools, Helm's
    `toYaml` and `--set` do not keep. Refused, naming the rules and the values."""
    entries = list(config.rules.items())
    conflicts: dict[tuple[str, str, str], list[str]] = {}
    for rule_id in RULES_BY_ID:
        names = [rule_id] + [r.id for r in RULES_BY_ID.values() if r.alias_of == rule_id]
        fields: dict[str, dict[str, Any]] = {}
        exact: set[str] = set()
        for pattern, entry in entries:
            if not any(glob_match(name, pattern) for name in names):
                continue
            values: dict[str, Any] = {"enabled": entry.enabled, "enforcement": entry.enforcement}
            values |= {f"params.{k}": v for k, v in entry.params.items()}
            for name, value in values.items():
                if value is None:
                    continue
                if not is_glob(pattern):
                    exact.add(name)
                else:
                    fields.setdefault(name, {})[pattern] = value
        for name, by_pattern in fields.items():
            patterns = list(by_pattern)
            for i, first in enumerate(patterns):
                for second in patterns[i + 1 :]:
                    if name not in exact and by_pattern[first] != by_pattern[second]:
                        conflicts.setdefault((first, second, name), []).append(rule_id)
    problems = []
    for (first, second, name), rules in conflicts.items():
        first_value = config.rules[first].model_dump().get(name.partition(".")[0])
        second_value = config.rules[second].model_dump().get(name.partition(".")[0])
        if name.startswith("params."):
            first_value = config.rules[first].params[name[7:]]
            second_value = config.rules[second].params[name[7:]]
        loc: tuple[int | str, ...] = ("rules", second)
        problems.append(
            ConfigProblem(
                source,
                _line_of(root, loc),
                _path_text(loc),
                f"{first!r} and {second!r} both set {name} of {', '.join(rules)} "
                f"({_shown(first_value)} and {_shown(second_value)}): the outcome would depend "
                "on the order of the keys, which YAML tools and Helm do not keep",
                "set these rules by exact ID, or make the globs disjoint",
            )
        )
    return problems


def _shown(value: Any) -> str:
    if isinstance(value, Enforcement):
        return value.value
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _too_large(source: str, size: int) -> ConfigError:
    return ConfigError(
        [
            ConfigProblem(
                source,
                None,
                "",
                f"larger than {MAX_CONFIG_BYTES} bytes (1 MiB, what a ConfigMap holds): "
                f"{size} bytes",
            )
        ]
    )


def _compose(text: str, source: str) -> tuple[Any, yaml.Node | None]:
    """The data and its YAML node tree (for lines), parsed once; ConfigError for text that is not
    one YAML document of bounded size and shape."""
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_CONFIG_BYTES:
        raise _too_large(source, size)
    try:
        shape = shape_problem(text, max_depth=MAX_DEPTH, max_nodes=MAX_NODES)
        if shape is not None:
            raise ConfigError([ConfigProblem(source, shape.line, "", shape.reason)])
        loader = yaml.SafeLoader(text)
        try:
            root = loader.get_single_node()
            data = loader.construct_document(root) if root is not None else None
        finally:
            loader.dispose()
    except ConfigError:
        raise
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        reason = f"not valid YAML: {getattr(exc, 'problem', exc)}"
        raise ConfigError([ConfigProblem(source, line, "", reason)]) from None
    except (ValueError, TypeError, OverflowError) as exc:
        # PyYAML's constructors let some through, as for the date 2026-13-01.
        reason = f"not valid YAML: {exc}"
        raise ConfigError([ConfigProblem(source, None, "", reason)]) from None
    return data, root


def parse_config(text: str, source: str = "<config>") -> FileConfig:
    """Parse configuration text; ConfigError lists every problem with source, line and key path.

    The text must hold a mapping: `{}` for the defaults. An empty or comment-only text is refused,
    as a file caught mid-write is, rather than taken for a configuration without policies.
    """
    data, root = _compose(text, source)
    if data is None:
        reason = "holds no configuration (empty, or only comments); write {} for the defaults"
        raise ConfigError([ConfigProblem(source, None, "", reason)])
    if not isinstance(data, dict):
        raise ConfigError([ConfigProblem(source, 1, "", "the configuration must be a mapping")])
    problems = _param_problems(data, root, source)
    try:
        config = FileConfig.model_validate(data)
    except ValidationError as exc:
        problems += _validation_problems(exc, root, source)
    else:
        problems += _glob_conflicts(config, root, source)
    if problems:
        raise ConfigError(sorted(problems, key=lambda p: p.line or 0))
    return config


def load_config(path: str | None = None) -> FileConfig:
    """The configuration from `path`, else $JOBGUARD_CONFIG, else the defaults.

    $JOBGUARD_KUBERNETES_VERSION overrides nothing set in a file; it sets the version when no
    file is used. A file must hold a mapping (`{}` for the defaults) of at most 1 MiB.
    """
    path = path or os.environ.get(CONFIG_ENV) or None
    if path is None:
        version = os.environ.get(VERSION_ENV)
        return parse_config(f"kubernetesVersion: {version!r}\n" if version else "{}", VERSION_ENV)
    return parse_config(read_config_text(path), path)


def read_config_text(path: str) -> str:
    """The text of the configuration file at `path`: at most MAX_CONFIG_BYTES of UTF-8."""
    try:
        with open(path, "rb") as file:
            raw = file.read(MAX_CONFIG_BYTES + 1)
            if len(raw) > MAX_CONFIG_BYTES:
                raise _too_large(path, os.fstat(file.fileno()).st_size)
    except OSError as exc:
        raise ConfigError([ConfigProblem(path, None, "", f"cannot read: {exc.strerror}")]) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        reason = f"not UTF-8 text (byte {exc.start})"
        raise ConfigError([ConfigProblem(path, line, "", reason)]) from None
    return text


def subjects_config(s: Subjects) -> dict[str, list[str]]:
    """Subjects as the configuration file writes them (`SubjectsConfig`)."""
    return {
        "users": list(s.users),
        "groups": list(s.groups),
        "serviceAccounts": list(s.service_accounts),
    }


def effective_config(settings: Settings) -> dict[str, Any]:
    """What a Settings enforces, as data: version, exemptions (the built-in ones apart), suspend
    policies and every rule with its enablement, enforcement and parameters."""
    exemptions = settings.policies.exemptions
    policies = []
    for policy in settings.policies.policies:
        # As the file writes it: every namespace is ["*"].
        namespaces = [ALL_NAMESPACES] if policy.namespaces is None else list(policy.namespaces)
        match: dict[str, Any] = {"namespaces": namespaces}
        if policy.label_selector is not None:
            match["labelSelector"] = dict(policy.label_selector)
        policies.append(
            {
                "name": policy.name,
                "match": match,
                "forceSuspendOnCreate": policy.force_suspend_on_create,
                "controllers": subjects_config(policy.controllers),
                "usersMaySuspend": policy.users_may_suspend,
            }
        )
    rules: dict[str, Any] = {}
    for rule_id, rule in settings.rules.items():
        entry: dict[str, Any] = {
            "enabled": rule.enabled,
            "enforcement": rule.enforcement.value,
        }
        if rule.params:
            entry["params"] = {k: rule.params[k] for k in sorted(rule.params)}
        rules[rule_id] = entry
    return {
        "kubernetesVersion": settings.semantics.version,
        "exemptions": {
            "namespaces": list(exemptions.namespaces),
            **subjects_config(exemptions.subjects),
            "builtIn": subjects_config(exemptions.built_in),
        },
        "suspendPolicies": policies,
        "rules": rules,
    }


def digest(settings: Settings) -> str:
    """A short fingerprint of the effective configuration (logged at start and on reload)."""
    canonical = orjson.dumps(effective_config(settings), option=orjson.OPT_SORT_KEYS)
    return "sha256:" + hashlib.sha256(canonical).hexdigest()[:16]


def config_warnings(settings: Settings) -> list[str]:
    """What a valid configuration does that its author may not expect: suspend policies that can
    match the same Jobs (the first applies; `policy.shadowing` says what the later one loses).
    `config validate` prints them, `serve` logs them at start and on every reload."""
    return shadowing(settings.policies)


def log_fields(settings: Settings, path: str | None) -> dict[str, Any]:
    """What `serve` logs about the configuration in force, at start and on every reload."""
    enabled = [rule for rule in settings.rules.values() if rule.enabled]
    return {
        "config": path or "(defaults)",
        "digest": digest(settings),
        "kubernetesVersion": settings.semantics.version,
        "rules_enabled": len(enabled),
        "rules_denying": sum(rule.enforcement is Enforcement.DENY for rule in enabled),
        "suspend_policies": len(settings.policies.policies),
    }
