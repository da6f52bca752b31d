"""Commands that other commands run: what a deny rule must also see.

`npx npm publish`, `npm exec -- …`, `git submodule foreach …`, `git rebase --exec …`,
`parallel … :::`, `script -c …`, a git `!` alias: the words of the inner command, so that
`Bash(npm publish:*)` or `Bash(rm -rf:*)` is not walked around by a runner. Best effort
and for deny/ask matching only: the shell analysis judges the command itself.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence

_OPERATORS = ("|", "||", "&&", ";", "&", ";;", "|&")
RUNNER_SUBCOMMANDS = {"exec", "dlx"}  # `npm exec`, `pnpm dlx`
_PASS_THROUGH = {"toybox", "chronic", "ifne", "catchsegv"}  # `toybox rm -rf x` is `rm -rf x`


def segments(script: str) -> list[tuple[str, ...]]:
    """The simple commands of a short script, split at its operators (best effort: the
    shell analysis judges the script itself; this only lets deny rules see into it)."""
    try:
        words = shlex.split(script)
    except ValueError:
        words = script.split()
    out: list[tuple[str, ...]] = []
    current: list[str] = []
    for word in words:
        if word in _OPERATORS:
            if current:
                out.append(tuple(current))
            current = []
        else:
            current.append(word)
    if current:
        out.append(tuple(current))
    return out


def runner_inner(words: Sequence[str]) -> list[tuple[str, ...]]:
    """What `npx …`, `npm exec …`, `pnpm dlx …` run: the words after their own options."""
    i = 0
    while i < len(words):
        word = words[i]
        if word == "--":
            return [tuple(words[i + 1 :])] if i + 1 < len(words) else []
        if word in ("-c", "--call") and i + 1 < len(words):
            return segments(words[i + 1])
        if word.startswith("--call="):
            return segments(word[len("--call=") :])
        if word in ("-p", "--package"):
            i += 2
            continue
        if word.startswith("-"):
            i += 1
            continue
        return [tuple(words[i:])]
    return []


def forcing_config(option: str) -> bool:
    key, _, value = option.removeprefix("-c=").partition("=")
    key = key.lower()
    if option.startswith("--config-env="):
        return option[len("--config-env=") :].lower().startswith("remote.")
    if not option.startswith("-c=") or not key.startswith("remote."):
        return False
    if key.endswith(".mirror"):
        return value.lower() in ("", "true", "yes", "on", "1")
    return key.endswith(".push") and value.startswith("+")


def git_runs(sub: str, words: list[str]) -> list[tuple[str, ...]]:
    """Commands git runs for you: `submodule foreach CMD`, `rebase --exec CMD`,
    `bisect run CMD`."""
    if sub == "submodule" and "foreach" in words:
        rest = [w for w in words[words.index("foreach") + 1 :] if w != "--recursive"]
        return segments(rest[0]) if len(rest) == 1 else [tuple(rest)] if rest else []
    if sub == "rebase":
        found: list[tuple[str, ...]] = []
        for i, word in enumerate(words):
            if word in ("-x", "--exec") and i + 1 < len(words):
                found.extend(segments(words[i + 1]))
            elif word.startswith("--exec="):
                found.extend(segments(word[len("--exec=") :]))
            elif word.startswith("-x") and len(word) > 2:
                found.extend(segments(word[2:]))
        return found
    if sub == "bisect" and words[:1] == ["run"]:
        return [tuple(words[1:])] if words[1:] else []
    return []


def program_runs(program: str, words: list[str]) -> list[tuple[str, ...]]:
    """Commands other programs run for you, as far as a deny rule needs to see them."""
    if program in _PASS_THROUGH:
        return [tuple(words)] if words else []
    if program == "parallel":
        # Which words are option values we cannot tell: try the command at every word.
        cut = next((i for i, w in enumerate(words) if w in (":::", "::::", ":::+")), len(words))
        return [tuple(words[i:cut]) for i in range(cut) if not words[i].startswith("-")]
    if program == "script":
        for i, word in enumerate(words):
            bundle = word.startswith("-") and not word.startswith("--") and word.endswith("c")
            if (word == "--command" or bundle) and i + 1 < len(words):
                return segments(words[i + 1])
            if word.startswith("--command="):
                return segments(word[len("--command=") :])
    if program in ("gdb", "lldb") and "--args" in words:
        return [tuple(words[words.index("--args") + 1 :])]
    return []


__all__ = [
    "RUNNER_SUBCOMMANDS",
    "forcing_config",
    "git_runs",
    "program_runs",
    "runner_inner",
    "segments",
]
