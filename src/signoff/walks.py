"""What a listing or search tool reaches: the folders it lists, the trees whose files it
reads, and the names it picks out, worked out from its path and glob arguments.

A client's own tools (`Grep`, `Glob`, `LS`, Gemini's `grep_search`, `glob`,
`list_directory`, `read_many_files`) run in the client, which skips nothing the policy
hides, so each is judged as the shell's commands are:

- a listing (`walks="names"`) reads the folder it lists, like `ls DIR`: its path, and
  the leading folders of its pattern (`.signoff/*` lists `.signoff`, `.s*/*` lists what
  `.s*` matches). A wildcard folder (`*`, `**`) goes down listing names only, as `find`
  does; a name is no file's contents.
- a search (`walks="contents"`) reads every file of the tree it walks, like `grep -r`:
  a tree inside a denied folder or signoff's own state is denied; a tree that holds one
  asks. Its name filters (`*.pem`, `.env`) are judged as names of the files it reads.

A missing glob is the whole folder. Braces (`{a,b}`) and extended globs (`@(a|b)`) are
spelled out first, so `{.signoff,src}/*` lists `.signoff`. The folders and trees are
globs themselves (`/ws/.s*`): the policy judges them by what they can match.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Mapping, Sequence

from .effects import SAFE_ENV_SUFFIXES, Effects, PathRules, PathVerdict, declared_paths, rule_anchor
from .lazyre import lazy
from .protected import is_pattern, name_may_match, spellings
from .records import record, replace

TYPE_CHECKING = False  # not typing's: see signoff/__init__.py

if TYPE_CHECKING:
    from typing import Any, Literal

    from .effects import Access, Resolve
    from .rules import PathContext, Rule
    from .tools import ToolSpec

_DESCENTS = frozenset({"*", "**"})
_MAX_SPELLINGS = 64  # `protected.spellings` cuts there: past it, braces become `*`
# `@(a|b)`, `(a|b)`: one of the alternatives; `!(x)`, `+(x)`, `*(x)`, `?(x)`: any name
_ONE_OF = lazy(r"@?\(([^()]*)\)")
_ANY_OF = lazy(r"[!+*?]\([^()]*\)")
_BRACES = lazy(r"\{[^{}]*\}")
_VERBS = {"deny": "denied", "ask": "asks"}


@record(frozen=True, slots=True)
class Reach:
    """What one walk reaches: folders it lists or reads (`folders`), trees whose every
    file it reads (`trees`), and the names of the files it keeps there (`names`: `*.py`,
    `.env`, a glob's last part)."""

    folders: tuple[str, ...] = ()
    trees: tuple[str, ...] = ()
    names: tuple[str, ...] = ()


def reach(roots: Iterable[str], globs: Iterable[str], *, walks: str, style: str) -> Reach:
    """The reach of a tool that walks `roots` (raw paths) with `globs` (none: all)."""
    folders: list[str] = []
    trees: list[str] = []
    names: list[str] = []
    patterns = list(globs) or ["**"]
    for root in roots:
        folders.append(root)  # a walk reads its own folder, as `ls DIR` does
        if walks == "contents" and style == "filter":
            trees.append(root)  # a filter keeps names: the whole tree is walked
        for pattern in patterns:
            for text in _spelled(pattern):
                if style == "filter" and "/" not in text.rstrip("/"):
                    text = "**/" + text  # ripgrep: a name without a slash, at any depth
                folder, name, deep = split(root, text)
                if walks == "names":
                    folders.append(folder)
                elif deep:
                    trees.append(folder)
                    folders.append(folder)  # where the tree is: outside the workspace asks
                    names.append(name)
                else:
                    folders.append(posixpath.join(folder, name))
    return Reach(
        tuple(dict.fromkeys(folders)), tuple(dict.fromkeys(trees)), tuple(dict.fromkeys(names))
    )


def split(root: str, glob: str) -> tuple[str, str, bool]:
    """(folder, name, deep) of a glob walked from `root`: the folder it starts from (the
    root and the glob's leading folders, up to the first that is only a wildcard), the
    name it keeps, and whether it goes further down than `folder/name`. A plain path
    names a whole tree: (the path, "*", True)."""
    text = glob.strip()
    if not is_pattern(text):
        plain = text.rstrip("/") or ("/" if text.startswith("/") else ".")
        return _joined(root, plain), "*", True
    base = root
    if text.startswith("/"):
        base = "/"
    elif text == "~" or text.startswith("~/"):
        base, text = "~", text[1:]
    parts = [p for p in text.split("/") if p not in ("", ".")]
    if text.endswith(("/", "/.")) or not parts or parts[-1] == "..":
        name, deep = "*", True  # it names a folder (`docs/`, `x/..`): its whole tree
    else:
        name = parts.pop()
        deep = name == "**"
        if deep:
            name = "*"
    folder: list[str] = []
    for index, part in enumerate(parts):
        ups = [*parts[index:], name].count("..")
        if is_pattern(part) and ups:
            # `src/**/..`, `.s*/..`: a wildcard folder then a way up (`**` may be no
            # folder at all): the literal folders above, up as many times, whole
            folder.extend([".."] * ups)
            name, deep = "*", True
            break
        if part in _DESCENTS:
            deep = True
            break
        folder.append(part)
    return _joined(base, "/".join(folder)) if folder else base, name, deep


def _joined(base: str, rest: str) -> str:
    if rest.startswith("/") or rest == "~" or rest.startswith("~/"):
        return rest
    return posixpath.join(base, rest)


def _spelled(glob: str) -> list[str]:
    """The globs a pattern stands for, braces and extended globs spelled out; too many
    alternatives, and each brace is any name (`*`)."""
    text = _ANY_OF.sub("*", glob)
    text = _ONE_OF.sub(lambda m: _braced(m.group(1).split("|")), text)
    if "{" not in text:
        return [text]
    found = spellings(text, _MAX_SPELLINGS)
    if len(found) < _MAX_SPELLINGS:
        return [spelling for spelling, _ in found]
    while _BRACES.search(text):  # innermost first
        text = _BRACES.sub("*", text)
    return [text]


def _braced(alternatives: list[str]) -> str:
    return alternatives[0] if len(alternatives) == 1 else "{" + ",".join(alternatives) + "}"


# ------------------------------------------------------------------ effects and verdict


def effects_of(args: Mapping[str, Any], spec: ToolSpec, resolve: Resolve) -> Effects:
    """A listing or search tool's effects: the folders it lists (as reads), the trees it
    reads and the names it keeps, from its path (none: where it starts) and its globs."""
    roots, problem = declared_paths(args, spec)
    if problem:
        return Effects(problem=problem, arguments=args)
    globs: list[str] = []
    for key in spec.glob_args:
        value = args.get(key)
        for item in () if value is None else value if isinstance(value, list) else [value]:
            if not isinstance(item, str) or "\x00" in item:
                return Effects(problem=f"argument {key!r} must be a glob pattern", arguments=args)
            globs.append(item)
    found = reach(
        roots or [spec.default_path or "."], globs, walks=spec.walks or "", style=spec.glob_style
    )

    def resolved(raws: Sequence[str]) -> tuple[str, ...]:
        return tuple(dict.fromkeys(p for raw in raws for p in resolve(raw)))

    return Effects(
        reads=resolved(found.folders),
        trees=resolved(found.trees),
        names=found.names,
        arguments=args,
    )


def verdict(rules: PathRules, effects: Effects) -> PathVerdict | None:
    """What the path rules say about a walk's effects: its folders and trees as a
    client's globs match them (a `*` matches dot names too), then the names it keeps
    (`*.pem`) against the rules and secrets that are bare names: a filter that surely
    picks such files is denied or asks, as reading one of them would."""
    whole = rules.verdict(replace(effects, names=()), dotglob=True)
    if whole is not None and whole.effect == "deny":
        return whole
    found: PathVerdict | None = None
    passes: tuple[tuple[Literal["deny", "ask"], Mapping[Access, tuple[Rule, ...]]], ...] = (
        ("deny", rules.deny),
        ("ask", rules.ask),
    )
    for name in effects.names:
        for kind, lists in passes:
            for rule in lists.get("read", ()):
                if _names(rule, name, rules.ctx):
                    hit = PathVerdict(
                        kind,
                        rule.text,
                        f"reads files named {name}: {_VERBS[kind]} by rule {rule.text}",
                    )
                    if kind == "deny":
                        return hit
                    found = found or hit
        if name.endswith(SAFE_ENV_SUFFIXES):
            continue
        for boundary in rules.secret:
            if _names(boundary, name, rules.ctx):
                found = found or PathVerdict(
                    "ask",
                    "boundary",
                    f"reads files named {name}, a secret name ({boundary.specifier})",
                )
    return whole or found


def _names(rule: Rule, name: str, ctx: PathContext) -> bool:
    """Whether a rule that is a bare name (`.env`, `*.pem`) surely matches some file the
    name filter `name` keeps (a dot name only when spelled: bash's reading of `*`)."""
    if rule.specifier is None or rule_anchor(rule.specifier, ctx) is not None:
        return False  # a folder's rule: the trees are judged for it
    bare = rule.specifier.strip().rstrip("/")
    if not (is_pattern(name) and is_pattern(bare)):
        return name_may_match(name, bare)
    from fnmatch import fnmatchcase  # two globs: sure only when the rule's takes the other's

    return fnmatchcase(name, bare)


__all__ = ["Reach", "effects_of", "reach", "split", "verdict"]
