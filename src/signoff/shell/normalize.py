"""The normalised form of a simple command, so that deny and ask rules match actions.

`git push -f origin main`, `git push origin main --force`, `git push origin +main` and
`git -C . push --force-with-lease` are one action: a forced push. `rm -fr`, `rm -r -f`,
`rm --recursive --force` and `/bin/rm -rf` are one action too. A command and a rule's
specifier are both brought to this form:

- the program's basename;
- for programs we know, their global options apart (git `-C dir`, npm `--registry x`), the
  subcommand with its aliases resolved (`npm pub` = `npm publish`);
- the options as a SET: short bundles split (`-fr` = `-f -r`), short and long spellings
  and unambiguous long abbreviations (`--recur`) folded into one name, options implied by
  others added (`git push +main`, `--force-with-lease`, `--mirror`, `--delete` = force),
  wherever they appear (options after operands count);
- the operands in order, each marked when it might be the value of the option before it
  (for options we do not know, we cannot tell).

A rule matches a command when the programs are equal, the rule's options are a subset of
the command's, and the rule's operands match the command's (exactly, as a prefix for
`:*`, `*` for any words). Used for deny and ask rules only: an allow rule still needs its
text to match, so normalising never makes an allow rule allow more.
"""

from __future__ import annotations

import fnmatch
import posixpath
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from ..lazyre import lazy
from .inner import (
    RUNNER_SUBCOMMANDS,
    forcing_config,
    git_runs,
    program_runs,
    runner_inner,
    segments,
)


@dataclass(frozen=True, slots=True)
class Operand:
    """One operand of a normalized command, with every spelling it stands for."""

    spellings: frozenset[str]  # the word and the canonical names it stands for
    maybe_value: bool = False  # it follows an option that might take it as its value
    dynamic: bool = False  # `$X`, `$(…)`: known only at run time, it may be any word


@dataclass(frozen=True, slots=True)
class NormalCommand:
    """A simple command in canonical form (program, options, operands), for rules to match."""

    program: str
    options: frozenset[str]
    operands: tuple[Operand, ...]
    # Commands this one runs in turn: `npx npm publish`, `npm exec -- …`, a git `!` alias.
    inner: tuple[tuple[str, ...], ...] = ()
    dynamic: bool = False  # a word is computed at run time: it may be any option too


@dataclass(frozen=True)
class _Syntax:
    """What we know of one program's (or subcommand's) options."""

    aliases: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # spelling -> names
    valued: frozenset[str] = frozenset()  # canonical names that take a value
    long_names: tuple[str, ...] = ()  # for abbreviations (`--recur`)
    single_dash_long: bool = False  # find, `-name x`, `-delete`: no bundles


def _syntax(pairs: Sequence[tuple[str, str]], valued: Sequence[str] = (), **kw: bool) -> _Syntax:
    aliases: dict[str, tuple[str, ...]] = {}
    for spelling, names in pairs:
        aliases[spelling] = tuple(names.split())
    longs = tuple(s for s in aliases if s.startswith("--") and "=" not in s)
    return _Syntax(aliases, frozenset(valued), longs, **kw)


_FORCE = "--force"
_GIT_PUSH = _syntax(
    [
        ("-f", _FORCE),
        ("--force", _FORCE),
        ("--force-with-lease", f"--force-with-lease {_FORCE}"),
        ("--force-if-includes", f"--force-if-includes {_FORCE}"),
        ("--mirror", f"--mirror {_FORCE}"),
        ("-d", f"--delete {_FORCE}"),
        ("--delete", f"--delete {_FORCE}"),
        ("--prune", f"--prune {_FORCE}"),
        ("-u", "--set-upstream"),
        ("--set-upstream", "--set-upstream"),
        ("--all", "--all"),
        ("--tags", "--tags"),
        ("-n", "--dry-run"),
        ("--dry-run", "--dry-run"),
        ("--no-verify", "--no-verify"),
        ("-o", "--push-option"),
        ("--push-option", "--push-option"),
        ("--repo", "--repo"),
        ("--receive-pack", "--receive-pack"),
        ("--exec", "--receive-pack"),
        ("-v", "--verbose"),
        ("--verbose", "--verbose"),
        ("-q", "--quiet"),
        ("--quiet", "--quiet"),
    ],
    valued=("--push-option", "--repo", "--receive-pack"),
)
_GIT_SUB: dict[str, _Syntax] = {
    "push": _GIT_PUSH,
    "clean": _syntax(
        [
            ("-f", _FORCE),
            ("--force", _FORCE),
            ("-d", "-d"),
            ("-x", "-x"),
            ("-X", "-X"),
            ("-n", "--dry-run"),
            ("--dry-run", "--dry-run"),
            ("-e", "--exclude"),
            ("--exclude", "--exclude"),
        ],
        valued=("--exclude",),
    ),
    "branch": _syntax(
        [
            ("-d", "--delete"),
            ("--delete", "--delete"),
            ("-D", f"--delete {_FORCE}"),
            ("-f", _FORCE),
            ("--force", _FORCE),
            ("-m", "--move"),
            ("--move", "--move"),
            ("-M", f"--move {_FORCE}"),
            ("-c", "--copy"),
            ("--copy", "--copy"),
            ("-C", f"--copy {_FORCE}"),
        ]
    ),
    "checkout": _syntax(
        [("-f", _FORCE), ("--force", _FORCE), ("-b", "-b"), ("-B", f"-b {_FORCE}")]
    ),
    "switch": _syntax(
        [
            ("-f", _FORCE),
            ("--force", _FORCE),
            ("--discard-changes", _FORCE),
            ("-c", "--create"),
            ("--create", "--create"),
            ("-C", f"--create {_FORCE}"),
        ]
    ),
    "reset": _syntax(
        [
            ("--hard", "--hard"),
            ("--soft", "--soft"),
            ("--mixed", "--mixed"),
            ("--keep", "--keep"),
            ("--merge", "--merge"),
        ]
    ),
    "tag": _syntax(
        [
            ("-d", "--delete"),
            ("--delete", "--delete"),
            ("-f", _FORCE),
            ("--force", _FORCE),
            ("-m", "--message"),
            ("--message", "--message"),
        ],
        valued=("--message",),
    ),
    "commit": _syntax(
        [
            ("-a", "--all"),
            ("--all", "--all"),
            ("-m", "--message"),
            ("--message", "--message"),
            ("-F", "--file"),
            ("--file", "--file"),
            ("-n", "--no-verify"),
            ("--no-verify", "--no-verify"),
            ("--amend", "--amend"),
        ],
        valued=("--message", "--file"),
    ),
}
_GIT_GLOBAL = _syntax(
    [
        ("-C", "-C"),
        ("-c", "-c"),
        ("--git-dir", "--git-dir"),
        ("--work-tree", "--work-tree"),
        ("--namespace", "--namespace"),
        ("--config-env", "--config-env"),
        ("--exec-path", "--exec-path"),
        ("-p", "--paginate"),
        ("--paginate", "--paginate"),
        ("-P", "--no-pager"),
        ("--no-pager", "--no-pager"),
        ("--bare", "--bare"),
        ("--no-replace-objects", "--no-replace-objects"),
        ("--literal-pathspecs", "--literal-pathspecs"),
        ("--super-prefix", "--super-prefix"),
    ],
    valued=(
        "-C",
        "-c",
        "--git-dir",
        "--work-tree",
        "--namespace",
        "--config-env",
        "--super-prefix",
    ),
)

_RECURSIVE = [("-r", "-r"), ("-R", "-r"), ("--recursive", "-r")]
_FORCE_F = [("-f", "-f"), ("--force", "-f")]
_SIMPLE: dict[str, _Syntax] = {
    "rm": _syntax(
        [
            *_RECURSIVE,
            *_FORCE_F,
            ("-i", "-i"),
            ("-I", "-I"),
            ("--interactive=never", "-f"),
            ("--interactive=no", "-f"),
            ("--interactive=none", "-f"),
            ("--interactive", "-i"),
            ("-d", "-d"),
            ("--dir", "-d"),
            ("-v", "-v"),
            ("--verbose", "-v"),
            ("--no-preserve-root", "--no-preserve-root"),
            ("--preserve-root", "--preserve-root"),
            ("--one-file-system", "--one-file-system"),
        ]
    ),
    "cp": _syntax(
        [
            *_RECURSIVE,
            *_FORCE_F,
            ("-a", "-a -r"),
            ("--archive", "-a -r"),
            ("-t", "-t"),
            ("--target-directory", "-t"),
        ],
        valued=("-t",),
    ),
    "mv": _syntax([*_FORCE_F, ("-t", "-t"), ("--target-directory", "-t")], valued=("-t",)),
    "chmod": _syntax(_RECURSIVE),
    "chown": _syntax(_RECURSIVE),
    "chgrp": _syntax(_RECURSIVE),
    "curl": _syntax(
        [
            ("-X", "-X"),
            ("--request", "-X"),
            ("-o", "-o"),
            ("--output", "-o"),
            ("-d", "-d"),
            ("--data", "-d"),
            ("-H", "-H"),
            ("--header", "-H"),
            ("-u", "-u"),
            ("--user", "-u"),
            ("-T", "-T"),
            ("--upload-file", "-T"),
            ("-F", "-F"),
            ("--form", "-F"),
            ("-A", "-A"),
            ("--user-agent", "-A"),
            ("-e", "-e"),
            ("--referer", "-e"),
            ("-x", "-x"),
            ("--proxy", "-x"),
            ("-k", "-k"),
            ("--insecure", "-k"),
            ("-L", "-L"),
            ("--location", "-L"),
            ("-s", "-s"),
            ("--silent", "-s"),
        ],
        valued=("-X", "-o", "-d", "-H", "-u", "-T", "-F", "-A", "-e", "-x"),
    ),
    "find": _syntax(
        [],
        valued=(
            "-name",
            "-iname",
            "-path",
            "-ipath",
            "-type",
            "-newer",
            "-maxdepth",
            "-mindepth",
            "-user",
            "-group",
            "-perm",
            "-size",
            "-mtime",
            "-regex",
        ),
        single_dash_long=True,
    ),
}
_NPM_COMMANDS: dict[str, str] = {
    "pub": "publish",
    "i": "install",
    "in": "install",
    "ins": "install",
    "inst": "install",
    "insta": "install",
    "instal": "install",
    "isnt": "install",
    "isntal": "install",
    "isntall": "install",
    "add": "install",
    "un": "uninstall",
    "unlink": "uninstall",
    "remove": "uninstall",
    "rm": "uninstall",
    "r": "uninstall",
    "rb": "rebuild",
    "t": "test",
    "tst": "test",
    "run-script": "run",
    "rum": "run",
    "urn": "run",
    "x": "exec",
    "ic": "ci",
    "clean-install": "ci",
    "install-clean": "ci",
    "isntall-clean": "ci",
    "c": "config",
    "ln": "link",
    "ls": "list",
    "la": "list",
    "ll": "list",
    "up": "update",
    "upgrade": "update",
    "udpate": "update",
    "s": "search",
    "se": "search",
    "find": "search",
    "v": "view",
    "info": "view",
    "show": "view",
    "dist-tags": "dist-tag",
    "author": "owner",
    "login": "adduser",
    "add-user": "adduser",
}
_NPM_FULL = (
    "publish",
    "install",
    "uninstall",
    "unpublish",
    "deprecate",
    "dist-tag",
    "owner",
    "access",
    "adduser",
    "token",
    "team",
    "exec",
    "run",
    "test",
    "ci",
    "config",
    "update",
    "version",
    "pack",
    "link",
    "rebuild",
    "audit",
    "cache",
    "prune",
)
_NPM = _syntax(
    [
        ("-g", "--global"),
        ("--global", "--global"),
        ("-f", _FORCE),
        ("--force", _FORCE),
        ("-y", "--yes"),
        ("--yes", "--yes"),
        ("--registry", "--registry"),
        ("--tag", "--tag"),
        ("--otp", "--otp"),
        ("--access", "--access"),
        ("--prefix", "--prefix"),
        ("-C", "--prefix"),
        ("--userconfig", "--userconfig"),
        ("--cache", "--cache"),
        ("-w", "--workspace"),
        ("--workspace", "--workspace"),
        ("--loglevel", "--loglevel"),
        ("-D", "--save-dev"),
        ("--save-dev", "--save-dev"),
        ("--dry-run", "--dry-run"),
    ],
    valued=(
        "--registry",
        "--tag",
        "--otp",
        "--access",
        "--prefix",
        "--userconfig",
        "--cache",
        "--workspace",
        "--loglevel",
    ),
)
_GENERIC = _Syntax()
_OPERATORS = ("|", "||", "&&", ";", "&", ";;")


def _expand_option(word: str, syntax: _Syntax) -> tuple[list[str], bool, str | None]:
    """One option word -> (canonical names, whether its value is the next word, an
    attached value)."""
    if word in syntax.aliases and "=" in word:  # `rm --interactive=never` is `rm -f`
        return list(syntax.aliases[word]), False, None
    if word.startswith("--") or syntax.single_dash_long:
        name, eq, attached = word.partition("=")
        value = attached if eq else None
        names = syntax.aliases.get(name)
        if names is None and name.startswith("--") and syntax.long_names:
            # getopt_long and git accept any unambiguous prefix; take every candidate.
            hits = [n for n in syntax.long_names if n.startswith(name)]
            found = [c for h in hits for c in syntax.aliases[h]]
            names = tuple(dict.fromkeys(found)) if found else None
        canon = list(names) if names else [name]
        takes = any(n in syntax.valued for n in canon)
        if names is None:  # an option we do not know: the next word might be its value
            return canon, value is None, value
        return canon, takes and value is None, value
    out: list[str] = []
    letters = word[1:]
    for i, letter in enumerate(letters):
        names = syntax.aliases.get("-" + letter)
        canon = list(names) if names else ["-" + letter]
        out.extend(canon)
        if any(n in syntax.valued for n in canon):
            rest = letters[i + 1 :]
            return out, not rest, rest or None
    unknown = not syntax.aliases
    return out, unknown and len(letters) == 1, None


def _is_option(word: str) -> bool:
    return len(word) > 1 and word.startswith("-") and word != "--"


def _scan(
    words: Sequence[str], syntax: _Syntax, options: set[str], stop_at_operand: bool = False
) -> tuple[list[Operand], int]:
    """Options into `options`; the operands; and where scanning stopped."""
    operands: list[Operand] = []
    after_option = False
    i = 0
    while i < len(words):
        word = words[i]
        if word == "--":
            operands.extend(Operand(frozenset([w])) for w in words[i + 1 :])
            return operands, len(words)
        if _is_option(word):
            names, needs_value, attached = _expand_option(word, syntax)
            options.update(names)
            if attached is not None:
                options.update(f"{n}={attached}" for n in names)
            known_value = needs_value and any(n in syntax.valued for n in names)
            if known_value and i + 1 < len(words):
                options.update(f"{n}={words[i + 1]}" for n in names)
                i += 2
                after_option = False
                continue
            after_option = needs_value
            i += 1
            continue
        if stop_at_operand and not after_option:
            return operands, i
        operands.append(Operand(frozenset([word]), after_option))
        after_option = False
        i += 1
    return operands, len(words)


def _git(words: list[str], options: set[str], inner: list[tuple[str, ...]]) -> list[Operand]:
    globals_: set[str] = set()
    front, stop = _scan(words, _GIT_GLOBAL, globals_, stop_at_operand=True)
    options.update("git:" + g for g in globals_)
    rest = words[stop:]
    if not rest:
        return front
    sub = rest[0]
    # `git -c alias.p='push --force' p`: the alias is the command it stands for; a `!`
    # alias runs a shell command, which is judged as an inner command.
    for g in sorted(globals_):
        if g.startswith("-c=alias.") and "=" in g[len("-c=alias.") :]:
            name, _, value = g[len("-c=alias.") :].partition("=")
            if name != sub:
                continue
            if value.startswith("!"):
                inner.extend(segments(value[1:]))
                continue
            try:
                rest = [*shlex.split(value), *rest[1:]]
            except ValueError:
                break
            sub = rest[0] if rest else sub
    if sub == "push" and any(forcing_config(g) for g in globals_):
        options.add(_FORCE)  # `-c remote.origin.mirror=true`, a `+refspec` push config
    syntax = _GIT_SUB.get(sub, _GENERIC)
    operands = [*front, Operand(frozenset([sub]))]
    more, _ = _scan(rest[1:], syntax, options)
    inner.extend(git_runs(sub, rest[1:]))
    if sub == "push":
        for operand in more:
            (word,) = operand.spellings
            if word.startswith("+"):  # `+main`: a forced update of that ref
                options.add(_FORCE)
                operand = Operand(frozenset([word, word[1:]]), operand.maybe_value)
            elif word.startswith(":") and len(word) > 1:  # `:main` deletes it
                options.update(("--delete", _FORCE))
                operand = Operand(frozenset([word, word[1:]]), operand.maybe_value)
            operands.append(operand)
        return operands
    return [*operands, *more]


_RUNNERS = {"npx", "pnpx", "bunx"}


def _npm(words: list[str], options: set[str]) -> list[Operand]:
    operands, _ = _scan(words, _NPM, options)
    for index, operand in enumerate(operands):
        (word,) = operand.spellings
        names = {word, _NPM_COMMANDS.get(word, word)}
        # npm resolves unambiguous abbreviations of its commands (`npm publ`).
        hits = {c for c in _NPM_FULL if c.startswith(word)} if len(word) >= 2 else set()
        if len(hits) == 1:
            names |= hits
        operands[index] = Operand(frozenset(names), operand.maybe_value)
        if not operand.maybe_value:
            break  # only the first real operand is the command
    return operands


@lru_cache(maxsize=4096)
def normalize_argv(argv: tuple[str, ...]) -> NormalCommand | None:
    """The normalised form of one simple command (None for an empty one)."""
    if not argv:
        return None
    program = posixpath.basename(argv[0]) or argv[0]
    words = _expand_braces(argv[1:])
    options: set[str] = set()
    inner: list[tuple[str, ...]] = []
    if program == "git":
        operands = _git(words, options, inner)
    elif program in ("npm", "pnpm", "yarn"):
        operands = _npm(words, options)
        command = next((o for o in operands if not o.maybe_value), None)
        if command is not None and command.spellings & RUNNER_SUBCOMMANDS:
            at = next(i for i, w in enumerate(words) if w in command.spellings)
            inner.extend(runner_inner(words[at + 1 :]))
    elif program in _RUNNERS:
        operands, _ = _scan(words, _GENERIC, options)
        inner.extend(runner_inner(words))
    else:
        operands, _ = _scan(words, _SIMPLE.get(program, _GENERIC), options)
        inner.extend(program_runs(program, words))
    dynamic = any(_is_dynamic(w) for w in words)
    if dynamic:
        operands = [
            Operand(o.spellings, True, True) if any(_is_dynamic(w) for w in o.spellings) else o
            for o in operands
        ]
    return NormalCommand(program, frozenset(options), tuple(operands), tuple(inner), dynamic)


def _is_dynamic(word: str) -> bool:
    return "$" in word or "`" in word


_BRACES = lazy(r"\{([^{}]*,[^{}]*)\}")
_MAX_EXPANSION = 64


def _expand_braces(words: Sequence[str]) -> list[str]:
    """`{-f,build}` is two words to the shell (`-f build`); the analysis sees one."""
    out: list[str] = []
    for word in words:
        expanded = [word]
        while any(_BRACES.search(w) for w in expanded) and len(expanded) <= _MAX_EXPANSION:
            step: list[str] = []
            for w in expanded:
                match = _BRACES.search(w)
                if match is None:
                    step.append(w)
                    continue
                head, tail = w[: match.start()], w[match.end() :]
                step.extend(head + alt + tail for alt in match.group(1).split(","))
            expanded = step
        out.extend(expanded)
    return out


# ------------------------------------------------------------------ rule side


@dataclass(frozen=True, slots=True)
class CommandPattern:
    """A shell rule's command, compiled: what a `NormalCommand` must hold to match it."""

    program: str
    options: frozenset[str]
    operands: tuple[frozenset[str], ...]  # each: the spellings it accepts; {"*"}: any words
    prefix: bool  # `:*` or a trailing ` *`: more operands may follow

    def matches(self, command: NormalCommand) -> bool:
        if command.program != self.program:
            return False
        if not (self.options <= command.options or command.dynamic):
            return False
        return _operands_match(self.operands, command.operands, self.prefix)


_ANY = frozenset(["*"])


def compile_pattern(specifier: str) -> CommandPattern | None:
    """A shell rule's specifier in normalised form, or None when it cannot be read as one
    simple command (a glob in the program name, shell operators, unbalanced quotes)."""
    spec = specifier.strip()
    prefix = False
    if spec.endswith(":*"):
        spec, prefix = spec[:-2].rstrip(), True
    try:
        words = shlex.split(spec)
    except ValueError:
        return None
    if not words or any(w in _OPERATORS or w.startswith((">", "<", "$(", "`")) for w in words):
        return None
    if any(c in words[0] for c in "*?[$`"):
        return None
    if words[-1] == "*":
        words, prefix = words[:-1], True
    normal = normalize_argv(tuple(words))
    if normal is None:
        return None
    operands: list[frozenset[str]] = []
    for operand in normal.operands:
        word = next(iter(operand.spellings)) if len(operand.spellings) == 1 else None
        if word == "*":
            operands.append(_ANY)
        elif word is not None:
            operands.append(operand.spellings)
        else:  # `pub` means `publish`, `+main` means `main` (the force is an option)
            operands.append(frozenset(s for s in operand.spellings if s not in words))
    return CommandPattern(normal.program, normal.options, tuple(operands), prefix)


def _word_matches(pattern: frozenset[str], operand: Operand) -> bool:
    if operand.dynamic:
        return True
    if len(pattern) == 1:
        (glob,) = pattern
        if any(c in glob for c in "*?["):
            return any(fnmatch.fnmatchcase(s, glob) for s in operand.spellings)
    return bool(pattern & operand.spellings)


def _operands_match(
    patterns: tuple[frozenset[str], ...], operands: tuple[Operand, ...], prefix: bool
) -> bool:
    """Patterns against operands; an operand that might be an option's value may be
    skipped, and a lone `*` pattern takes any number of operands."""
    n, m = len(operands), len(patterns)
    memo: dict[tuple[int, int], bool] = {}

    def go(i: int, j: int) -> bool:
        key = (i, j)
        if key in memo:
            return memo[key]
        if j == m:
            result = prefix or all(o.maybe_value for o in operands[i:])
        elif patterns[j] == _ANY:
            result = go(i, j + 1) or (i < n and go(i + 1, j))
        elif i == n:
            result = False
        else:
            result = (_word_matches(patterns[j], operands[i]) and go(i + 1, j + 1)) or (
                operands[i].maybe_value and go(i + 1, j)
            )
        memo[key] = result
        return result

    return go(0, 0)


__all__ = ["CommandPattern", "NormalCommand", "Operand", "compile_pattern", "normalize_argv"]
