"""Permission rules: `Tool`, `Tool(specifier)`, parsed once and matched fast.

The specifier is read according to the kind of tool it names:

- shell tools: a command. `Bash(npm run test:*)` is a word-boundary prefix,
  `Bash(git log *)` a glob (a trailing ` *` also matches nothing), else exact.
- file tools: a gitignore-style path. `//abs/path`, `~/path`, `/path` (from the project
  root), `./path` or `path/with/slash` (from the workspace); a pattern without a slash
  (`*.pem`, `.env`) matches at any depth; a match on a directory covers what is inside.
- network tools: `domain:example.com` (the host or any subdomain), else a URL glob.
- other tools: argument matchers, `send_email(to=*@example.com, subject=Weekly*)`,
  `pay(amount<=100)`.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Mapping, Sequence

from .exceptions import InvalidInput
from .lazyre import lazy
from .records import field, record
from .rule_checks import (
    looks_like_argument_matchers,
    matcher_value_problem,
    specifier_problem,
    split_operator,
    tool_name_problem,
)
from .rule_values import MISSING, canonical_url, canonical_url_pattern, host_matches, values_match
from .tools import ALIASES, BUILTIN_SPECS, RULE_GROUPS, ToolSpec, canonical_tool_name

TYPE_CHECKING = False  # not typing's: see signoff/__init__.py

if TYPE_CHECKING:  # loaded by the first shell deny or ask rule matched (~2 ms otherwise)
    from typing import Any

    from .shell.normalize import CommandPattern

_RULE_RE = lazy(r"^\s*([A-Za-z_*][\w.\-*]*)\s*(?:\((.*)\))?\s*$", re.DOTALL)
# The operator is read as the whole run of operator characters, so that `a=>5` is the
# misspelt `a>=5` (an error naming it), never `a` equal to the text ">5".
_ARG_RE = lazy(r"^\s*([A-Za-z_][\w.\-]*)?\s*([<>=!]+)(.*?)\s*$", re.DOTALL)
_SPACES = lazy(r"\s+")


@record(frozen=True, slots=True)
class PathContext:
    """Where relative paths in rules start from; all already resolved (realpath)."""

    workspace: str
    home: str
    project_root: str


@record(frozen=True)
class Rule:
    """One parsed rule (`Tool` or `Tool(specifier)`), with where it was written."""

    text: str
    tool: str
    specifier: str | None = None
    source: str = ""  # "file:line" where the rule was written
    _compiled: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    _paths: dict[PathContext, re.Pattern[str]] = field(
        default_factory=dict, compare=False, repr=False
    )

    def __str__(self) -> str:
        return self.text

    # -- which tools it names ------------------------------------------------------

    def names_tool(self, spec: ToolSpec, *, allowing: bool = False) -> bool:
        if self.tool == spec.name:
            return True
        if canonical_tool_name(self.tool) == canonical_tool_name(spec.name):
            return True
        risky = spec.tier in ("destructive", "external", "privileged", "unknown")
        if allowing and risky and spec.kind != "shell":  # shell parts are judged one by one
            # `Edit(src/**)` or `*` allows editing, never deleting or reaching out.
            return False
        if self.tool == "*":
            return True
        group = RULE_GROUPS.get(self.tool)
        return group is not None and group == spec.kind

    # -- does it match this call ---------------------------------------------------

    def matches_shell(self, command: str) -> bool:
        """The rule's text against the command's text (what an allow rule needs)."""
        if self.specifier is None:
            return True
        matcher = self._compiled.get("shell")
        if matcher is None:
            matcher = self._compiled["shell"] = compile_command_pattern(self.specifier)
        return bool(matcher(_SPACES.sub(" ", command.strip())))

    def catches_shell(self, command: str, argv: Sequence[str] = ()) -> bool:
        """For deny and ask rules: the text matches, or the normalised command does
        (`rm -fr`, `/bin/rm -r -f` and `rm --recursive --force` are all `rm -rf`)."""
        if self.matches_shell(command):
            return True
        if "pattern" not in self._compiled:
            from .shell.normalize import compile_pattern

            self._compiled["pattern"] = compile_pattern(self.specifier or "")
        pattern: CommandPattern | None = self._compiled["pattern"]
        if pattern is None:
            return False
        words = tuple(argv) if argv else _split_words(command)
        return _pattern_catches(pattern, words, depth=0)

    def matches_path(self, resolved_path: str, ctx: PathContext) -> bool:
        if self.specifier is None:
            return True
        regex = self._paths.get(ctx)
        if regex is None:
            regex = self._paths[ctx] = compile_path_pattern(self.specifier, ctx)
        return regex.match(resolved_path) is not None

    def matches_url(self, url: str, *, every: bool = True) -> bool:
        """`every` (allow rules): the URL must match as written AND canonically; otherwise
        (deny/ask rules) either form is enough, so no spelling of a host slips past."""
        if self.specifier is None:
            return True
        spec = self.specifier.strip()
        if spec.startswith("domain:"):
            return host_matches(_url_host(url), spec[len("domain:") :].strip(), loose=not every)
        raw = fnmatch.fnmatchcase(url, spec)
        canonical = fnmatch.fnmatchcase(canonical_url(url), canonical_url_pattern(spec))
        return (raw and canonical) if every else (raw or canonical)

    def matches_arguments(self, arguments: Mapping[str, Any], *, every: bool) -> bool:
        """Argument matchers. For list (and tuple) values, `every` (allow rules) needs all
        elements to match; otherwise (deny/ask rules) one matching element is enough.
        Values are compared normalised (see `values_match`)."""
        if self.specifier is None:
            return True
        matchers = self._compiled.get("args")
        if matchers is None:
            matchers = self._compiled["args"] = parse_argument_matchers(self.specifier, self.text)
        for key, op, expected in matchers:
            if not values_match(arguments.get(key, MISSING), op, expected, every=every):
                return False
        return True


def _pattern_catches(pattern: CommandPattern, words: tuple[str, ...], depth: int) -> bool:
    from .shell.normalize import normalize_argv

    normal = normalize_argv(words) if words else None
    if normal is None:
        return False
    if pattern.matches(normal):
        return True
    # `npx npm publish`, `npm exec -- npm publish`: what it runs in turn is caught too.
    return depth < 4 and any(_pattern_catches(pattern, w, depth + 1) for w in normal.inner)


def _split_words(command: str) -> tuple[str, ...]:
    import shlex  # a shell rule's words only (it compiles a pattern at import)

    try:
        return tuple(shlex.split(command))
    except ValueError:
        return tuple(command.split())


def _url_host(url: str) -> str:
    from urllib.parse import urlsplit  # a URL rule's only (with ipaddress: slow to import)

    try:
        return urlsplit(url).hostname or ""
    except ValueError:
        return ""


def parse_argument_matchers(specifier: str, rule_text: str) -> list[tuple[str, str, str]]:
    matchers: list[tuple[str, str, str]] = []
    for piece in _split_top_level(specifier):
        match = _ARG_RE.match(piece)
        if match is None:
            raise InvalidInput(
                f"rule {rule_text!r}: {piece.strip()!r} is not an argument matcher "
                "(expected name=pattern, or name<=number)"
            )
        key, run, rest = match.groups()
        split = split_operator(key or "", run, rest)
        if isinstance(split, str):
            raise InvalidInput(f"rule {rule_text!r}: {split}")
        op, value = split
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        problem = matcher_value_problem(key, op, value)
        if problem:
            raise InvalidInput(f"rule {rule_text!r}: {problem}")
        matchers.append((key, op, value))
    return matchers


def _split_top_level(text: str) -> list[str]:
    """Split on commas that are not inside quotes."""
    parts, current, quote = [], [], ""
    for char in text:
        if quote:
            current.append(char)
            if char == quote:
                quote = ""
        elif char in "\"'":
            quote = char
            current.append(char)
        elif char == ",":
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return [p for p in parts if p.strip()]


# ------------------------------------------------------------------- shell commands


def compile_command_pattern(specifier: str) -> Callable[[str], bool]:
    spec = _SPACES.sub(" ", specifier.strip())
    if spec in ("*", ""):
        return lambda command: True
    if spec.endswith(":*") and "*" not in spec[:-2]:
        prefix = spec[:-2].rstrip()
        # Word boundary: `npm:*` covers `npm test` but not `npmx`.
        return lambda command: command == prefix or command.startswith(prefix + " ")
    if "*" in spec:
        optional_tail = spec.endswith(" *")
        body = spec[:-2] if optional_tail else spec
        regex = ".*".join(re.escape(piece) for piece in body.split("*"))
        if optional_tail:
            regex += r"(?: .*)?"
        compiled = re.compile(regex + r"\Z", re.DOTALL)
        return lambda command: compiled.match(command) is not None
    return lambda command: command == spec


# ------------------------------------------------------------------- paths


def compile_path_pattern(specifier: str, ctx: PathContext) -> re.Pattern[str]:
    spec = specifier.strip()
    if spec.startswith("//"):
        base, rest, anchored = "/", spec[2:], True
    elif spec == "~" or spec.startswith("~/"):
        base, rest, anchored = ctx.home, spec[2:], True
    elif spec.startswith("/"):
        base, rest, anchored = ctx.project_root, spec[1:], True
    elif spec.startswith("./"):
        base, rest, anchored = ctx.workspace, spec[2:], True
    else:
        base, rest = ctx.workspace, spec
        anchored = "/" in rest.rstrip("/")
    rest = rest.rstrip("/")
    if rest.endswith("/**"):
        rest = rest[:-3]  # `dir/**` covers the directory itself too (listing it reads it)
    body = _glob_to_regex(rest) if rest else ""
    if anchored:
        prefix = re.escape(base.rstrip("/"))
        regex = prefix + ("/" + body if body else "")
    else:
        # gitignore: a bare name matches at any depth, anywhere.
        regex = r"(?:.*/)?" + body
    return re.compile(r"\A" + regex + r"(?:/.*)?\Z", re.DOTALL)


def _glob_to_regex(glob: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(glob):
        char = glob[i]
        if glob.startswith("**/", i):
            out.append(r"(?:.*/)?")
            i += 3
        elif glob.startswith("**", i):
            out.append(r".*")
            i += 2
        elif char == "*":
            out.append(r"[^/]*")
            i += 1
        elif char == "?":
            out.append(r"[^/]")
            i += 1
        elif char == "[":
            end = glob.find("]", i + 1)
            if end == -1:
                out.append(re.escape(char))
                i += 1
            else:
                inner = glob[i + 1 : end].replace("\\", "\\\\").replace("[", "\\[")
                if inner.startswith("!"):
                    inner = "^" + inner[1:]
                out.append(f"[{inner}]")
                i = end + 1
        else:
            out.append(re.escape(char))
            i += 1
    return "".join(out)


# ------------------------------------------------------------------- parsing


def parse_rule(text: str, *, source: str = "") -> Rule:
    """Parse `Tool` or `Tool(specifier)`; the error names the rule and where it was."""
    where = f"{source}: " if source else ""
    if not isinstance(text, str):
        raise InvalidInput(f"{where}rule {text!r} is not a string")
    match = _RULE_RE.match(text)
    if match is None:
        raise InvalidInput(
            f"{where}rule {text!r} is not of the form Tool or Tool(specifier)"
            + (" (unbalanced parentheses?)" if text.count("(") != text.count(")") else "")
        )
    tool, specifier = match.group(1), match.group(2)
    problem = tool_name_problem(tool)
    if problem:
        raise InvalidInput(f"{where}rule {text!r}: {problem}")
    if specifier is not None:
        if not specifier.strip():
            raise InvalidInput(f"{where}rule {text!r} has an empty specifier; write {tool}")
        if specifier.strip() == "*":
            specifier = None  # Tool(*) is the same as Tool
    if (
        specifier is not None
        and ":*" in specifier
        and not specifier.rstrip().endswith(":*")
        and not specifier.strip().startswith("domain:*.")
    ):
        raise InvalidInput(f"{where}rule {text!r}: ':*' may only end the specifier")
    rule = Rule(text=text.strip(), tool=tool, specifier=specifier, source=source)
    if specifier is not None:
        problem = specifier_problem(tool, specifier)
        if problem:
            raise InvalidInput(f"{where}rule {text!r}: {problem}")
        if _names_other_tool(tool) or (
            canonical_tool_name(tool) not in BUILTIN_SPECS
            and tool not in RULE_GROUPS
            and looks_like_argument_matchers(specifier)
        ):
            try:  # validate now, not at the first call
                parse_argument_matchers(specifier, text)
            except InvalidInput as exc:
                raise InvalidInput(f"{where}{exc}") from exc
    return rule


def _names_other_tool(tool: str) -> bool:
    name = canonical_tool_name(tool)
    spec = BUILTIN_SPECS.get(name)
    return spec is not None and spec.kind == "other" and tool not in ALIASES


__all__ = ["PathContext", "Rule", "host_matches", "parse_rule"]
