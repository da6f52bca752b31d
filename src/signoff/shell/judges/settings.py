"""Catastrophic commands inside settings that name a program: git aliases and git options
that run programs, pager and editor variables, `man -P`.

`git -c alias.x='!rm -rf ~' x`, `git config core.pager 'rm -rf ~'`, `git rebase --exec
'rm -rf /'`, `PAGER='rm -rf ~' man ls`, `export EDITOR='rm -rf /'`: the setting's value
is a shell command that runs (now or on the next pager, editor or alias use). Any such
setting already asks; a catastrophic value is denied wherever it is visible.
"""

from __future__ import annotations

import fnmatch

from ...lazyre import lazy
from ..args import texts_of
from ..facts import Context, Facts
from ..parse import Word
from .payload import scan_shell_texts

# Environment variables whose value is a command line a program runs.
COMMAND_VAR = lazy(
    r"^(\w*PAGER|\w*EDITOR|VISUAL|BROWSER|GIT_SSH_COMMAND|GIT_SSH|GIT_EXTERNAL_DIFF|\w*ASKPASS"
    r"|LESSOPEN|LESSCLOSE|PROMPT_COMMAND|RSYNC_RSH|RSYNC_CONNECT_PROG|FCEDIT|GIT_PROXY_COMMAND)$"
)
# git configuration keys (lowercased) whose value is a command git runs.
_GIT_COMMAND_KEYS = (
    "alias.*",
    "core.pager",
    "core.editor",
    "core.sshcommand",
    "core.fsmonitor",
    "core.askpass",
    "core.gitproxy",
    "diff.external",
    "diff.*.command",
    "diff.*.textconv",
    "difftool.*.cmd",
    "mergetool.*.cmd",
    "merge.*.driver",
    "filter.*.clean",
    "filter.*.smudge",
    "filter.*.process",
    "sequence.editor",
    "gpg.program",
    "gpg.*.program",
    "sendemail.sendmailcmd",
    "sendemail.tocmd",
    "sendemail.cccmd",
    "uploadpack.packobjectshook",
    "remote.*.uploadpack",
    "remote.*.receivepack",
    "browser.*.cmd",
    "man.*.cmd",
    "credential.helper",
    "credential.*.helper",
    "pager.*",
    "instaweb.httpd",
)
# Options of git subcommands whose value is a command (`--exec=CMD` or `--exec CMD`).
_GIT_COMMAND_OPTS: dict[str, tuple[str, ...]] = {
    "rebase": ("--exec", "-x"),
    "filter-branch": (
        "--tree-filter",
        "--index-filter",
        "--msg-filter",
        "--env-filter",
        "--commit-filter",
        "--parent-filter",
        "--tag-name-filter",
    ),
    "clone": ("--upload-pack", "-u"),
    "fetch": ("--upload-pack",),
    "pull": ("--upload-pack",),
    "ls-remote": ("--upload-pack",),
    "push": ("--receive-pack", "--exec"),
    "archive": ("--exec",),
    "difftool": ("--extcmd", "-x"),
    "grep": ("--open-files-in-pager", "-O"),
}
_GIT_VALUE_OPTS = frozenset(
    {
        "-C",
        "--git-dir",
        "--work-tree",
        "--namespace",
        "--exec-path",
        "--super-prefix",
        "--config-env",
    }
)
_CONFIG_VALUE_OPTS = frozenset(
    {"-f", "--file", "--blob", "--type", "--default", "--comment", "--value", "--url", "-t"}
)
_BOOLEAN = frozenset({"true", "false", "yes", "no", "on", "off", "1", "0", ""})


def setting_command(key: str, value: str) -> str | None:
    """The shell command a git setting runs, or None when it names no command."""
    lowered = key.lower()
    if not any(fnmatch.fnmatchcase(lowered, p) for p in _GIT_COMMAND_KEYS):
        return None
    if lowered.startswith("alias."):
        return value[1:] if value.startswith("!") else None
    if lowered.startswith("pager.") and value.lower() in _BOOLEAN:
        return None
    return value[1:] if value.startswith("!") else value


def judge_variable(name: str, value: Word, f: Facts, cwd: str | None, ctx: Context) -> None:
    """`PAGER='rm -rf ~'` (prefix, `export`, `env`): deny a catastrophic command value."""
    if value.dynamic or not COMMAND_VAR.match(name):
        return
    text = value.text.lstrip("|-") if name.startswith("LESS") else value.text
    scan_shell_texts(f"the {name} setting", [text], f, cwd, ctx)


def judge_git(args: list[Word], f: Facts, cwd: str | None, ctx: Context) -> None:
    """Commands visible in git's own options and settings."""
    texts = texts_of(args)
    found: list[tuple[str, str]] = []
    i = 0
    while i < len(texts) and texts[i].startswith("-"):
        t = texts[i]
        if t == "-c" and i + 1 < len(texts):
            _setting(texts[i + 1], found)
        elif t.startswith("-c") and "=" in t:
            _setting(t[2:], found)
        i += 2 if t in _GIT_VALUE_OPTS or t == "-c" else 1
    sub, rest = (texts[i], texts[i + 1 :]) if i < len(texts) else ("", [])
    if sub == "config":
        _config(rest, found)
    elif sub == "bisect" and rest[:1] == ["run"] and len(rest) > 1:
        found.append(("git bisect run", " ".join(rest[1:])))
    elif sub == "submodule" and "foreach" in rest:
        cmd = [
            t
            for t in rest[rest.index("foreach") + 1 :]
            if t not in ("--recursive", "-q", "--quiet")
        ]
        if cmd:
            found.append(("git submodule foreach", " ".join(cmd)))
    for opt in _GIT_COMMAND_OPTS.get(sub, ()):
        for k, t in enumerate(rest):
            if t == opt and k + 1 < len(rest):
                found.append((f"git {sub} {opt}", rest[k + 1]))
            elif t.startswith(opt + "=") and opt.startswith("--"):
                found.append((f"git {sub} {opt}", t[len(opt) + 1 :]))
            elif len(opt) == 2 and t.startswith(opt) and len(t) > 2:
                found.append((f"git {sub} {opt}", t[2:]))
    if sub in ("clone", "fetch", "pull", "ls-remote", "push", "archive", "remote", "submodule"):
        # the ext:: transport runs its command (`%` escapes a space)
        found.extend(
            (f"git {sub} ext:: remote", _ext_command(t[5:])) for t in rest if t.startswith("ext::")
        )
    for who, text in found:
        scan_shell_texts(who, [text], f, cwd, ctx)
        if f.catastrophic:
            return


def _ext_command(spec: str) -> str:
    """`ext::sh -c rm% -rf% ~` is the argv sh, -c, "rm -rf ~" (`% ` is a space inside an
    argument, `%%` a percent sign): as a shell command line."""
    import shlex

    args: list[str] = [""]
    i = 0
    while i < len(spec):
        ch = spec[i]
        if ch == "%" and i + 1 < len(spec) and spec[i + 1] in " %":
            args[-1] += spec[i + 1]
            i += 2
            continue
        if ch == " ":
            args.append("")
        else:
            args[-1] += ch
        i += 1
    return shlex.join(a for a in args if a)


def _setting(pair: str, found: list[tuple[str, str]]) -> None:
    key, eq, value = pair.partition("=")
    command = setting_command(key, value) if eq else None
    if command:
        found.append((f"the git setting {key}", command))


def _config(rest: list[str], found: list[tuple[str, str]]) -> None:
    """`git config [--global] KEY VALUE`, `git config set KEY VALUE`, `--add KEY VALUE`."""
    pos: list[str] = []
    skip = False
    for t in rest:
        if skip:
            skip = False
        elif t.startswith("-") and t != "-":
            skip = t in _CONFIG_VALUE_OPTS
        else:
            pos.append(t)
    if pos[:1] == ["set"]:
        pos = pos[1:]
    if len(pos) >= 2:
        _setting(f"{pos[0]}={pos[1]}", found)


def judge_pager_option(
    program: str, args: list[Word], f: Facts, cwd: str | None, ctx: Context
) -> None:
    """`man -P CMD`, `man --pager=CMD`, `bat --pager CMD`."""
    texts = texts_of(args)
    values: list[str] = []
    for k, t in enumerate(texts):
        if t in ("-P", "--pager") and k + 1 < len(texts):
            values.append(texts[k + 1])
        elif t.startswith("--pager="):
            values.append(t[len("--pager=") :])
        elif t.startswith("-P") and len(t) > 2 and program == "man":
            values.append(t[2:])
    if values:
        scan_shell_texts(f"the {program} pager option", values, f, cwd, ctx)


__all__ = ["COMMAND_VAR", "judge_git", "judge_pager_option", "judge_variable", "setting_command"]
