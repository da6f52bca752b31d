"""What runs is what was judged: the files a call touches, recorded when it is judged and
checked again when it runs.

A file tool's call names paths; the policy judges what they resolve to (symlinks followed).
Between that judgement (or a person's approval) and the moment the call runs, the file
system can change under it: `ln -s .git/config report.txt` turns an approved "new file:
report.txt" into an overwrite of git's configuration. So:

    judged:  call_targets(policy, call) -> {raw path: [resolved path, state]}, kept with
             the request (its metadata) so that the comparison survives a restart
    runs:    call_targets again; target_change() says what moved, in words; a call whose
             targets moved does not run on the old judgement
    opens:   the executor sets the judged targets (`expecting`) around the tool; the
             built-in tools compare their own resolution with them (`check_expected`)
             and open the resolved path without following any symlink

`judgement_change` compares two verdicts of the same call: at run time, stricter than
what was decided (or an ask for other reasons than the ones a person saw) means the
person's decision does not cover it.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from typing import Any

from .exceptions import ToolError
from .models import ToolCall, Verdict
from .policy import Policy

TARGETS_KEY = "targets"
Targets = dict[str, list[str]]  # raw path as the call names it -> [resolved path, state]

_STRICTNESS = {"allow": 0, "notify": 1, "ask": 2, "deny": 3}
_PROJECT_TOOLS = frozenset({"create_project"})


class TargetChanged(ToolError):
    """A path resolves elsewhere (or to something else) than when the call was judged."""


def path_state(path: str) -> str:
    """What is at `path` now, without following a final link: missing, file, dir, link,
    or the kind of special file (fifo, socket, device)."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return "missing"
    except OSError as exc:
        return f"unreadable ({exc.strerror})"
    return mode_kind(mode)


def mode_kind(mode: int) -> str:
    """file, dir, link, or the kind of special file (the words stored in requests)."""
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISDIR(mode):
        return "dir"
    if stat.S_ISLNK(mode):
        return "link"
    return special_kind(mode)


def special_kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "fifo"
    if stat.S_ISSOCK(mode):
        return "socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "device"
    return "special file"


def raw_paths(policy: Policy, call: ToolCall) -> list[str]:
    """The paths a file tool's call names, as written (create_project: each new file)."""
    spec = policy.registry.get(call.name)
    if spec.kind not in ("file_read", "file_write") or not spec.path_arg:
        return []
    base = call.arguments.get(spec.path_arg, ".")
    if not isinstance(base, str) or "\x00" in base:
        return []  # the policy asks about it; the tool refuses it
    paths = [base]
    files = call.arguments.get("files")
    if _canonical_name(call.name) in _PROJECT_TOOLS and isinstance(files, Mapping):
        paths += [os.path.join(base, n) for n in files if isinstance(n, str) and "\x00" not in n]
    return paths


def call_targets(policy: Policy, call: ToolCall) -> Targets:
    """Each path the call names -> where it resolves now and what is there. A path that
    cannot be resolved because it changes meanwhile (a link flipping under realpath)
    raises TargetChanged: such a call is refused, never run on a guess."""
    targets: Targets = {}
    for raw in raw_paths(policy, call):
        try:
            resolved = policy.resolve_path(raw)
        except OSError as exc:
            raise TargetChanged(
                f"{raw} could not be resolved ({exc.strerror or exc}): it "
                "changed while it was being judged"
            ) from None
        targets[raw] = [resolved, path_state(resolved)]
    return targets


def unjudgeable(policy: Policy, call: ToolCall, exc: Exception) -> Verdict:
    """The verdict on a call whose paths changed while it was judged: refused (the model
    may try again), never run and never shown as something it is not."""
    reason = (
        str(exc)
        if isinstance(exc, TargetChanged)
        else (f"the file system changed while the call was judged ({exc})")
    )
    return Verdict(
        "deny",
        "high",
        "changing",
        (f"{reason}; not run, call it again",),
        policy.registry.get(call.name).tier,
    )


def portable(targets: Mapping[str, list[str]], workspace: str) -> Targets:
    """Targets as stored with a request: paths inside the workspace relative to it (`./x`),
    so that a run resumed where the workspace has another absolute path still compares."""
    out: Targets = {}
    for raw, (path, state) in targets.items():
        inside = path == workspace or path.startswith(workspace.rstrip(os.sep) + os.sep)
        out[raw] = [os.path.join(".", os.path.relpath(path, workspace)) if inside else path, state]
    return out


def pinned(policy: Policy, call: ToolCall, targets: Mapping[str, list[str]]) -> ToolCall:
    """The call as the policy should judge it: each path it names replaced by where it
    resolved in `targets`. The verdict is then about exactly the files the tool may open
    (it compares its own resolution with the same targets and follows no link), even if a
    link flips between the resolution and the judgement."""
    if not targets:
        return call  # not a file tool: nothing to pin
    spec = policy.registry.get(call.name)
    base = call.arguments.get(spec.path_arg, ".") if spec.path_arg else None
    if not isinstance(base, str) or base not in targets:
        return call
    resolved = targets[base][0]
    arguments = dict(call.arguments)
    arguments[spec.path_arg or ""] = resolved
    files = arguments.get("files")
    if _canonical_name(call.name) in _PROJECT_TOOLS and isinstance(files, Mapping):
        pinned_files: dict[Any, Any] = {}
        for name, content in files.items():
            key = os.path.join(base, name) if isinstance(name, str) else ""
            pinned_files[os.path.relpath(targets[key][0], resolved) if key in targets else name] = (
                content
            )
        arguments["files"] = pinned_files
    return call.with_arguments(arguments)


def stored_targets(metadata: Mapping[str, Any]) -> Targets | None:
    """The targets kept in a request's metadata (None: none were recorded)."""
    value = metadata.get(TARGETS_KEY)
    if not isinstance(value, Mapping):
        return None
    out: Targets = {}
    for raw, pair in value.items():
        if isinstance(raw, str) and isinstance(pair, list | tuple) and len(pair) == 2:
            out[raw] = [str(pair[0]), str(pair[1])]
    return out


def target_change(
    before: Mapping[str, list[str]], now: Mapping[str, list[str]], workspace: str
) -> str | None:
    """Why the targets `now` are not the ones judged `before`, in words; None if the same."""
    changes = []
    for raw in sorted(set(before) | set(now)):
        old, new = before.get(raw), now.get(raw)
        if old == new:
            continue
        changes.append(
            f"{raw} was {_describe(old, workspace)} when judged and is now "
            f"{_describe(new, workspace)}"
        )
    return "; ".join(changes) or None


def _describe(pair: list[str] | None, workspace: str) -> str:
    if pair is None:
        return "not named"
    path, state = pair
    shown = os.path.relpath(path, workspace) if path.startswith(workspace + os.sep) else path
    shown = shown[2:] if shown.startswith("./") else shown
    return {
        "missing": f"a new file {shown}",
        "file": f"the file {shown}",
        "dir": f"the directory {shown}",
    }.get(state, f"{shown} ({state})")


def judgement_change(decided: Verdict, now: Verdict) -> str | None:
    """Why a decision made on verdict `decided` does not cover the verdict `now`, or None.

    A deny, or anything stricter, does not run on the earlier decision; an ask for other
    reasons than the ones shown (another rule, risk or shell part) is a different question.
    """
    if now.effect == "deny":
        return f"it is now denied: {now.reason}"
    if _STRICTNESS[now.effect] > _STRICTNESS[decided.effect]:
        return f"it now needs a person's approval: {now.reason}"
    if now.effect == "ask" and decided.effect == "ask" and _asked_for(now) != _asked_for(decided):
        return f"the reasons to ask changed: {now.reason}"
    return None


def _asked_for(verdict: Verdict) -> tuple[Any, ...]:
    from .reviewer_settings import policy_reasons  # the reviewer's note is not a reason

    return (verdict.risk, verdict.rule, policy_reasons(verdict), verdict.parts)


def _canonical_name(name: str) -> str:
    from .tools import ALIASES

    alias = ALIASES.get(name)
    return alias[0] if alias else name


# ---------------------------------------------------------------------- at execution

_expected: ContextVar[Mapping[str, list[str]] | None] = ContextVar(
    "signoff_expected_targets", default=None
)


@contextlib.contextmanager
def expecting(targets: Mapping[str, list[str]] | None) -> Iterator[None]:
    """Run a tool with the targets its call was judged on (the built-in tools check)."""
    token = _expected.set(targets)
    try:
        yield
    finally:
        _expected.reset(token)


def check_expected(raw: str, resolved: str, *, tool: str) -> None:
    """Refuse when `raw` resolves now to another path than the one judged."""
    expected = _expected.get()
    if expected is None or raw not in expected:
        return
    judged = expected[raw][0]
    if judged != resolved:
        raise TargetChanged(
            f"{tool}: {raw} now resolves to {resolved}, not to {judged} as when the call "
            "was judged (a symlink changed?); nothing was done"
        )


__all__ = [
    "TARGETS_KEY",
    "TargetChanged",
    "Targets",
    "call_targets",
    "check_expected",
    "expecting",
    "judgement_change",
    "path_state",
    "pinned",
    "portable",
    "raw_paths",
    "stored_targets",
    "target_change",
    "unjudgeable",
]
