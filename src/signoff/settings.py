"""Settings files: user, project and local TOML, merged so that a deny anywhere wins.

    ~/.config/signoff/settings.toml      user
    .signoff/settings.toml               project (committed)
    .signoff/settings.local.toml         local (where "always allow" grants land)

    [permissions]
    deny  = ["write_file(secrets/**)", "Bash(git push --force:*)"]
    ask   = ["Bash(git push:*)"]
    allow = ["Bash(npm run test:*)", "read_file"]
    default_mode = "default"            # default | accept-edits | plan | auto
    additional_directories = ["../shared"]

    [boundaries]
    sensitive = ["config/prod/**"]      # added to the built-in sensitive paths
    allowed_domains = ["docs.python.org"]
    max_amount = 100                    # any tool's amount argument above this asks
    amount_caps = { pay = 50 }          # per tool

    [tools.send_email]
    expires_after = "2h"                # how long its requests wait for a decision

    [hooks]                             # coding-agent hooks (docs/coding-agents.md)
    ask = "inbox"                       # native | inbox | defer
    [sandbox]
    enabled = false                     # never run unknown code contained: ask instead
    [reviewer]                          # a model that settles asks in auto mode
    model = "gpt-4.1-mini"              # (see reviewer_settings; docs/reviewer.md)
    api_key_env = "REVIEWER_API_KEY"    # base_url and this: user or local file only

Rule lists from every file are combined; scalars from the more local file win.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping

from .exceptions import InvalidInput, SettingsError
from .hints import literal_type
from .lazyre import lazy
from .normalize import domain_pattern_problem
from .plainpath import joined
from .records import field, record, replace
from .reviewer_settings import KEYS as REVIEWER_KEYS
from .reviewer_settings import (
    ReviewerSettings,
    committed_problem,
    parse_reviewer,
    unfinished_problem,
)
from .rules import Rule, parse_rule

TYPE_CHECKING = False  # not typing's: see signoff/__init__.py

if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, Literal

    Mode = Literal["default", "accept-edits", "plan", "auto"]

MODES: tuple[Mode, ...] = ("default", "accept-edits", "plan", "auto")
_LITERALS: dict[str, tuple[str, ...]] = {"Mode": MODES}

if not TYPE_CHECKING:

    def __getattr__(name):
        return literal_type(__name__, _LITERALS, name)


# under a workspace (strings, not Paths: `workspace / PROJECT_FILE` reads the same)
PROJECT_FILE = ".signoff/settings.toml"
LOCAL_FILE = ".signoff/settings.local.toml"

_KNOWN = {
    "permissions": {"allow", "ask", "deny", "default_mode", "additional_directories"},
    "boundaries": {"sensitive", "allowed_domains", "max_amount", "amount_caps"},
    "tools": None,  # free-form: one table per tool
    "approvers": None,
    "notifications": None,
    "store": None,
    "hooks": None,  # coding-agent hooks (signoff.adapters): ask strategy, wait, ...
    "reviewer": set(REVIEWER_KEYS),
    "sandbox": {"enabled"},
}
_DURATION = lazy(r"^\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*$")
_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}


@record(frozen=True)
class Settings:
    """The merged settings of a workspace: rules, mode, boundaries and their sources."""

    deny: tuple[Rule, ...] = ()
    ask: tuple[Rule, ...] = ()
    allow: tuple[Rule, ...] = ()
    mode: Mode = "default"
    additional_directories: tuple[str, ...] = ()
    sensitive: tuple[str, ...] = ()
    allowed_domains: tuple[str, ...] = ()
    max_amount: float | None = None
    amount_caps: Mapping[str, float] = field(default_factory=dict)
    tool_expiry: Mapping[str, float] = field(default_factory=dict)  # seconds
    sources: tuple[str, ...] = ()
    extra: Mapping[str, Any] = field(default_factory=dict)  # other tables, for other parts
    reviewer: ReviewerSettings | None = None  # [reviewer]: settles asks in auto mode
    # [sandbox] enabled: run what only asks for its unknown effects in the OS sandbox
    # instead (docs/containment.md); false in any file wins (it only asks more)
    sandbox: bool = True

    @classmethod
    def load(cls, workspace: str | os.PathLike[str], *, user: bool = True) -> Settings:
        """User, then project, then local settings of a workspace, merged (`load_settings`)."""
        return load_settings(workspace, user=user)

    @classmethod
    def from_rules(
        cls,
        *,
        allow: list[str] | tuple[str, ...] = (),
        ask: list[str] | tuple[str, ...] = (),
        deny: list[str] | tuple[str, ...] = (),
        **options: Any,
    ) -> Settings:
        """Settings from Python lists, as a test or an embedding program writes them. An
        error names the list, the item and the caller's line: `Settings.from_rules(allow[0])
        at app.py:12: rule ...`."""
        caller = sys._getframe(1)
        at = f"{os.path.basename(caller.f_code.co_filename)}:{caller.f_lineno}"

        def parsed(name: str, rules: list[str] | tuple[str, ...]) -> tuple[Rule, ...]:
            return tuple(
                parse_rule(r, source=f"Settings.from_rules({name}[{i}]) at {at}")
                for i, r in enumerate(rules)
            )

        return cls(
            allow=parsed("allow", allow),
            ask=parsed("ask", ask),
            deny=parsed("deny", deny),
            **options,
        )

    def merged_with(self, more_local: Settings) -> Settings:
        """Lists are combined (deny anywhere wins later); scalars of the local file win."""
        base = Settings()
        return replace(
            self,
            deny=self.deny + more_local.deny,
            ask=self.ask + more_local.ask,
            allow=self.allow + more_local.allow,
            mode=more_local.mode if more_local.mode != base.mode else self.mode,
            additional_directories=self.additional_directories + more_local.additional_directories,
            sensitive=self.sensitive + more_local.sensitive,
            allowed_domains=self.allowed_domains + more_local.allowed_domains,
            max_amount=_min_cap(self.max_amount, more_local.max_amount),
            amount_caps=_merge_caps(self.amount_caps, more_local.amount_caps),
            tool_expiry={**self.tool_expiry, **more_local.tool_expiry},
            sources=self.sources + more_local.sources,
            sandbox=self.sandbox and more_local.sandbox,
            extra={**self.extra, **more_local.extra},
            reviewer=(
                self.reviewer.merged_with(more_local.reviewer)
                if self.reviewer is not None and more_local.reviewer is not None
                else more_local.reviewer or self.reviewer
            ),
        )


def _min_cap(a: float | None, b: float | None) -> float | None:
    # A cap is a boundary: the stricter one holds, whichever file set it.
    caps = [c for c in (a, b) if c is not None]
    return min(caps) if caps else None


def _merge_caps(a: Mapping[str, float], b: Mapping[str, float]) -> dict[str, float]:
    merged = dict(a)
    for tool, cap in b.items():
        merged[tool] = min(cap, merged.get(tool, cap))
    return merged


def parse_duration(value: Any, where: str) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
        return float(value)
    match = _DURATION.match(str(value)) if isinstance(value, str) else None
    if match is None or float(match.group(1)) <= 0:
        raise InvalidInput(f"{where}: {value!r} is not a duration (like 90, '30m', '2h', '7d')")
    return float(match.group(1)) * _UNITS[match.group(2)]


def _line_of(text: str, needle: str) -> int | None:
    for number, line in enumerate(text.splitlines(), start=1):
        if needle in line:
            return number
    return None


def parse_settings(text: str, path: str) -> Settings:
    """Parse one settings file; every error names the file, the line and what is wrong."""
    import tomllib  # only when a settings file exists (a hook in a bare workspace: never)

    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        line_match = re.search(r"line (\d+)", str(exc))
        raise SettingsError(
            f"not valid TOML: {exc}",
            path=path,
            line=int(line_match.group(1)) if line_match else None,
        ) from exc

    def fail(message: str, needle: str | None = None) -> SettingsError:
        return SettingsError(message, path=path, line=_line_of(text, needle) if needle else None)

    for table, value in doc.items():
        if table == "reviewer":
            continue  # its own parser names the key and the line
        if table not in _KNOWN:
            raise fail(f"unknown table [{table}] (known: {', '.join(_KNOWN)})", f"[{table}")
        keys = _KNOWN[table]
        if keys is not None:
            if not isinstance(value, dict):
                raise fail(f"{table} must be a table", table)
            for key in value:
                if key not in keys:
                    raise fail(f"unknown key {key!r} in [{table}]", key)

    perms = doc.get("permissions", {})
    lists: dict[str, tuple[Rule, ...]] = {}
    for name in ("deny", "ask", "allow"):
        raw = perms.get(name, [])
        if not isinstance(raw, list):
            raise fail(f"permissions.{name} must be a list of rules", f"{name}")
        rules = []
        for item in raw:
            line = (
                _line_of(text, f'"{item}"')
                or _line_of(text, f"'{item}'")
                or _line_of(text, str(item))
            )
            source = f"{path}:{line}" if line else path
            try:
                rules.append(parse_rule(item, source=source))
            except InvalidInput as exc:
                message = str(exc).removeprefix(f"{source}: ")
                raise SettingsError(
                    f"in permissions.{name}: {message}", path=path, line=line
                ) from exc
        lists[name] = tuple(rules)

    mode = perms.get("default_mode", "default")
    if mode not in MODES:
        raise fail(f"default_mode {mode!r} is not one of {', '.join(MODES)}", "default_mode")
    directories = perms.get("additional_directories", [])
    if not isinstance(directories, list) or not all(isinstance(d, str) for d in directories):
        raise fail("additional_directories must be a list of paths", "additional_directories")

    bounds = doc.get("boundaries", {})
    sensitive = bounds.get("sensitive", [])
    domains = bounds.get("allowed_domains", [])
    for key, value in (("sensitive", sensitive), ("allowed_domains", domains)):
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise fail(f"boundaries.{key} must be a list of strings", key)
    for domain in domains:
        problem = domain_pattern_problem(domain)
        if problem:  # it would match no host: every fetch would cross the boundary
            raise fail(f"boundaries.allowed_domains: {domain!r} {problem}", domain)
    max_amount = bounds.get("max_amount")
    if max_amount is not None and (
        isinstance(max_amount, bool) or not isinstance(max_amount, int | float)
    ):
        raise fail("boundaries.max_amount must be a number", "max_amount")
    caps = bounds.get("amount_caps", {})
    if not isinstance(caps, dict) or not all(
        isinstance(v, int | float) and not isinstance(v, bool) for v in caps.values()
    ):
        raise fail("boundaries.amount_caps must map tool names to numbers", "amount_caps")

    expiry: dict[str, float] = {}
    tools = doc.get("tools", {})
    if not isinstance(tools, dict):
        raise fail("[tools] must be a table of tool tables", "[tools")
    for tool, options in tools.items():
        if not isinstance(options, dict):
            raise fail(f"[tools.{tool}] must be a table", f"tools.{tool}")
        if "expires_after" in options:
            try:
                expiry[tool] = parse_duration(
                    options["expires_after"], f"tools.{tool}.expires_after"
                )
            except InvalidInput as exc:
                raise fail(str(exc), "expires_after") from exc

    reviewer = parse_reviewer(doc["reviewer"], path, fail) if "reviewer" in doc else None
    sandbox = doc.get("sandbox", {}).get("enabled", True)
    if not isinstance(sandbox, bool):
        raise fail("sandbox.enabled must be true or false", "enabled")

    # the folder holding .signoff/ (Path.resolve is os.path.realpath)
    there = os.path.dirname(os.path.dirname(os.path.realpath(path)))
    base_dir = there if path.endswith(".toml") else os.getcwd()
    return Settings(
        deny=lists["deny"],
        ask=lists["ask"],
        allow=lists["allow"],
        mode=mode,
        additional_directories=tuple(
            os.path.realpath(joined(base_dir, os.path.expanduser(d))) for d in directories
        ),
        sensitive=tuple(sensitive),
        allowed_domains=tuple(domains),
        max_amount=float(max_amount) if max_amount is not None else None,
        amount_caps={k: float(v) for k, v in caps.items()},
        tool_expiry=expiry,
        sources=(path,),
        extra={
            k: v for k, v in doc.items() if k in ("approvers", "notifications", "store", "hooks")
        },
        reviewer=reviewer,
        sandbox=sandbox,
    )


def user_settings_path() -> Path:
    from pathlib import Path

    return Path(user_settings_file())


def user_settings_file() -> str:
    """`user_settings_path()` as a string (without importing pathlib: a hook's start-up)."""
    config_home = os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config")
    return joined(config_home, "signoff", "settings.toml")


def load_settings(workspace: str | os.PathLike[str], *, user: bool = True) -> Settings:
    """User, then project, then local settings of a workspace, merged."""
    project = joined(workspace, PROJECT_FILE)
    files = [user_settings_file()] if user else []
    files += [project, joined(workspace, LOCAL_FILE)]
    settings = Settings()
    for file in files:
        if os.path.isfile(file):
            with open(file, encoding="utf-8") as handle:
                text = handle.read()
            one = parse_settings(text, file)
            problem = committed_problem(one.reviewer) if file == project else None
            if problem is not None:
                raise SettingsError(problem[0], path=file, line=_line_of(text, problem[1]))
            settings = settings.merged_with(one)
    unfinished = unfinished_problem(settings.reviewer)
    if unfinished is not None:
        raise SettingsError(unfinished, path=", ".join(settings.sources))
    return settings


def add_local_allow_rule(workspace: str | os.PathLike[str], rule: str) -> Path:
    """Append an allow rule to `.signoff/settings.local.toml`, keeping comments and layout."""
    from pathlib import Path

    parse_rule(rule)  # never write a rule we could not read back
    path = Path(workspace) / LOCAL_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    text = path.read_text("utf-8") if path.exists() else ""
    if text:
        parse_settings(text, str(path))  # refuse to touch a file that is already broken
    import tomlkit  # writing settings only: judging a call never needs it

    doc = tomlkit.parse(text)
    perms = doc.get("permissions")
    if perms is None:
        perms = tomlkit.table()
        doc["permissions"] = perms
    allow = perms.get("allow")
    if allow is None:
        allow = tomlkit.array()
        allow.multiline(True)
        perms["allow"] = allow
    if rule not in [str(item) for item in allow]:
        allow.append(rule)
    tmp = path.with_suffix(".toml.tmp")
    tmp.write_text(tomlkit.dumps(doc), "utf-8")
    os.replace(tmp, path)
    return path


def remove_local_allow_rule(workspace: str | os.PathLike[str], rule: str) -> bool:
    """Take an allow rule out of `.signoff/settings.local.toml` (comments and layout kept).
    Returns whether it was there."""
    from pathlib import Path

    path = Path(workspace) / LOCAL_FILE
    if not path.exists():
        return False
    text = path.read_text("utf-8")
    parse_settings(text, str(path))  # refuse to touch a file that is already broken
    import tomlkit  # writing settings only: judging a call never needs it

    doc = tomlkit.parse(text)
    allow = doc.get("permissions", {}).get("allow")
    if allow is None:
        return False
    kept = [i for i, item in enumerate(allow) if str(item) == rule]
    for index in reversed(kept):
        del allow[index]
    if kept:
        tmp = path.with_suffix(".toml.tmp")
        tmp.write_text(tomlkit.dumps(doc), "utf-8")
        os.replace(tmp, path)
    return bool(kept)


__all__ = [
    "LOCAL_FILE",
    "MODES",
    "PROJECT_FILE",
    "Mode",
    "Settings",
    "add_local_allow_rule",
    "load_settings",
    "parse_duration",
    "parse_settings",
    "remove_local_allow_rule",
]
