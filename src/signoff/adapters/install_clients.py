"""`signoff install codex|gemini|cursor` and their uninstall.

Each writes signoff's hooks into the client's own hooks file, keeping what is there (a
backup first), and never lets a failure of the hook pass: these clients fail open (a hook
that crashes or times out lets the call run), so every command is wrapped in `sh -c` so
that any failure is exit 2 with a reason on stderr, which all three read as "blocked",
and the hook gets `--deadline` shorter than the client's timeout. Install refuses a
client version it has not verified to block on exit 2 (Codex, Gemini); Cursor is not
checked (no client here) and says so.

Codex runs a hook only once it is trusted (an untrusted hook is skipped without a word,
so the call runs): install asks Codex itself (`codex app-server`, `hooks/list`) for each
hook's key and hash, writes `[hooks.state."<key>"] trusted_hash` into
`$CODEX_HOME/config.toml`, and asks again to verify every hook is trusted and enabled.
The key is the hook's position, so signoff's groups go first in each event's list.
What was added is listed in a manifest in `.signoff/install/`, and uninstall removes it.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..exceptions import ConfigurationError, InvalidInput
from ..i18n import plural
from .install import Report, _read_json, _write_json, client_version, remove_hook_groups

CLIENTS = ("codex", "gemini", "cursor")
MIN_VERSION = {"codex": (0, 171, 0), "gemini": (0, 61, 0)}  # verified to block on exit 2
PACKAGES = {"codex": "@openai/codex", "gemini": "@google/gemini-cli"}
EVENTS = {
    "codex": ("PreToolUse", "PermissionRequest", "PostToolUse"),
    "gemini": ("BeforeTool", "AfterTool"),
    "cursor": (
        "beforeShellExecution",
        "beforeMCPExecution",
        "beforeReadFile",
        "afterShellExecution",
    ),
}
# the first is the default: Gemini's own dialog ("native") never ends in a headless run
STRATEGY = {"codex": ("inbox",), "gemini": ("inbox", "native"), "cursor": ("inbox",)}
MARGIN = 30.0  # seconds between the hook's own deadline and the client's timeout


def check_version(client: str, program: str, report: Report) -> None:
    """Refuse a client that cannot be made to fail closed (or cannot be found)."""
    want = MIN_VERSION[client]
    shown = ".".join(map(str, want))
    version = client_version(program)
    if version is None:
        raise ConfigurationError(
            f"cannot run `{program} --version`: signoff checks {client}'s version before "
            f"installing (it must be {shown} or later); pass --program, nothing was written"
        )
    if version < want:
        raise ConfigurationError(
            f"{client} {'.'.join(map(str, version))} is older than {shown}, the first "
            f"version signoff verified to block a call on a failing hook; upgrade it "
            f"(npm install -g {PACKAGES[client]}), nothing was written"
        )
    report.say(f"{client} {'.'.join(map(str, version))}: a hook's exit 2 blocks the call")


def hook_command(client: str, *, ask: str, deadline: float, base: str | None = None) -> str:
    """The hook, wrapped so that any failure of it (a crash, a kill, a missing program)
    is exit 2 with a reason: the one answer these clients read as "blocked"."""
    if base is None:
        script = sys.argv[0] if sys.argv else ""
        if os.path.basename(script) == "signoff" and os.path.isfile(script):
            base = shlex.quote(os.path.realpath(script))
        else:  # -P: the project's own json.py or signoff/ never runs in the hook
            base = shlex.join([sys.executable, "-P", "-m", "signoff"])
    inner = (
        f"{base} hook {client} --ask {ask} --deadline {deadline:g} || "
        '{ echo "signoff: the hook failed (exit $?); the call is blocked" >&2; exit 2; }'
    )
    return "sh -c " + shlex.quote(inner)


def hooks_file(client: str, workspace: Path, user: bool) -> Path:
    if client == "codex":
        home = Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")
        return home / "hooks.json" if user else workspace / ".codex" / "hooks.json"
    folder = {"gemini": ".gemini", "cursor": ".cursor"}[client]
    name = "settings.json" if client == "gemini" else "hooks.json"
    return (Path.home() if user else workspace) / folder / name


def manifest_file(client: str, workspace: Path, user: bool) -> Path:
    return workspace / ".signoff" / "install" / f"{client}{'-user' if user else ''}.json"


def groups_for(client: str, command: str, wait: float) -> dict[str, dict[str, Any]]:
    timeout = wait + 2 * MARGIN  # the client's; the hook's own deadline is wait + MARGIN
    groups: dict[str, dict[str, Any]] = {}
    for event in EVENTS[client]:
        if client == "codex":
            hook = {"type": "command", "command": command, "timeout": int(timeout)}
            groups[event] = {"hooks": [hook]}
        elif client == "gemini":
            hook = {
                "type": "command",
                "name": "signoff",
                "command": command,
                "timeout": int(timeout * 1000),  # milliseconds
            }
            groups[event] = {"matcher": ".*", "hooks": [hook]}
        else:
            groups[event] = {"command": command, "failClosed": True}
    return groups


def install(
    client: str,
    workspace: str | os.PathLike[str] = ".",
    *,
    ask: str | None = None,
    user: bool = False,
    program: str | None = None,
    base: str | None = None,
    check: bool = True,
) -> Report:
    """Write the hooks (and, for Codex, trust them and verify it); see the module doc."""
    if client not in CLIENTS:
        raise InvalidInput(f"unknown client {client!r} (known: {', '.join(CLIENTS)})")
    strategy = ask or STRATEGY[client][0]
    if strategy not in STRATEGY[client]:
        raise InvalidInput(
            f"--ask {strategy} is not possible with {client} (it can: "
            f"{', '.join(STRATEGY[client])}): "
            + (
                "its hooks cannot ask the person"
                if client != "gemini"
                else "it cannot stop and be resumed later"
            )
        )
    report = Report()
    root = Path(workspace).resolve()
    program = program or client
    if check and client in MIN_VERSION:
        check_version(client, program, report)
    elif client == "cursor":
        report.warn(
            "Cursor's hooks are written to its documented schema (hooks v1, failClosed); "
            "signoff has not run them on a real Cursor"
        )
    from ..settings import load_settings
    from .core import hook_options

    wait = hook_options(load_settings(root)).wait
    command = hook_command(client, ask=strategy, deadline=wait + MARGIN, base=base)
    target = hooks_file(client, root, user)
    doc = _read_json(target)
    if client == "cursor":
        doc.setdefault("version", 1)
    hooks = doc.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise InvalidInput(f'{target}: "hooks" is not an object; nothing was written')
    manifest_path = manifest_file(client, root, user)
    old = _read_json(manifest_path).get("hooks") or {}
    wanted = groups_for(client, command, wait)
    for event, group in wanted.items():
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise InvalidInput(f"{target}: hooks.{event} is not a list; nothing was written")
        for previous in old.get(event, []):
            while previous in groups:
                groups.remove(previous)
        if group in groups:
            groups.remove(group)
        groups.insert(0, group)  # first: Codex keys a hook's trust by its position
    if target.exists():
        backup = target.with_name(f"{target.name}.signoff-backup-{int(time.time())}")
        backup.write_bytes(target.read_bytes())
        report.say(f"backed up {target} to {backup.name}")
    _write_json(target, doc)
    report.say(f"wrote {target} (signoff on {', '.join(EVENTS[client])}; ask: {strategy})")
    manifest: dict[str, Any] = {
        "v": 1,
        "file": str(target),
        "hooks": {e: [g] for e, g in wanted.items()},
    }
    if client == "codex":
        manifest["trust"] = trust_codex(program, root, target, command, report)
    _write_json(manifest_path, manifest)
    return report


# ---------------------------------------------------------------- Codex hook trust


def codex_config(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    return Path(env.get("CODEX_HOME") or Path.home() / ".codex") / "config.toml"


def list_codex_hooks(program: str, cwd: Path) -> list[dict[str, Any]]:
    """Codex's own view of its hooks for a project (`codex app-server`, `hooks/list`)."""
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"clientInfo": {"name": "signoff", "version": "install"}}},
        {"jsonrpc": "2.0", "method": "initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "hooks/list", "params": {"cwds": [str(cwd)]}},
    ]  # fmt: skip
    try:
        process = subprocess.Popen(
            [program, "app-server"],
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
    except OSError as exc:
        raise ConfigurationError(f"cannot start `{program} app-server`: {exc}") from exc
    try:
        assert process.stdin is not None and process.stdout is not None
        for message in messages:
            process.stdin.write(json.dumps(message) + "\n")
        process.stdin.flush()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = process.stdout.readline()
            if not line:
                break
            try:
                reply = json.loads(line)
            except ValueError:
                continue
            if reply.get("id") != 2:
                continue
            if "error" in reply:
                raise ConfigurationError(f"codex hooks/list failed: {reply['error']}")
            hooks: list[dict[str, Any]] = []
            for entry in reply.get("result", {}).get("data", []):
                hooks.extend(h for h in entry.get("hooks", []) if isinstance(h, dict))
            return hooks
        raise ConfigurationError("`codex app-server` did not answer hooks/list")
    finally:
        process.kill()
        process.wait()


def _ours(hooks: list[dict[str, Any]], target: Path, command: str) -> list[dict[str, Any]]:
    return [
        h
        for h in hooks
        if h.get("command") == command
        and os.path.realpath(str(h.get("sourcePath", ""))) == os.path.realpath(target)
    ]


def trust_codex(program: str, root: Path, target: Path, command: str, report: Report) -> list[str]:
    """Trust signoff's hooks in Codex's config, then verify Codex runs every one of them."""
    import tomlkit

    ours = _ours(list_codex_hooks(program, root), target, command)
    if len(ours) != len(EVENTS["codex"]):
        project = (
            ""
            if target.parent.parent != root
            else (" (Codex loads a project's .codex/ only when the project is trusted in Codex)")
        )
        raise ConfigurationError(
            f"Codex lists {len(ours)} of signoff's {len(EVENTS['codex'])} hooks in "
            f"{target}{project}; the hooks would not run"
        )
    config = codex_config()
    text = config.read_text("utf-8") if config.exists() else ""
    doc = tomlkit.parse(text)
    hooks_table = doc.setdefault("hooks", tomlkit.table())
    state = hooks_table.setdefault("state", tomlkit.table())
    keys = []
    for hook in ours:
        entry = tomlkit.table()
        entry["trusted_hash"] = str(hook["currentHash"])
        state[str(hook["key"])] = entry
        keys.append(str(hook["key"]))
    config.parent.mkdir(parents=True, exist_ok=True)
    tmp = config.with_name(config.name + ".signoff-tmp")
    tmp.write_text(tomlkit.dumps(doc), "utf-8")
    os.replace(tmp, config)
    check = _ours(list_codex_hooks(program, root), target, command)
    bad = [h.get("key") for h in check if h.get("trustStatus") != "trusted" or not h.get("enabled")]
    if bad or len(check) != len(ours):
        raise ConfigurationError(
            f"Codex does not run signoff's hooks after trusting them ({bad or 'missing'}); "
            "the calls would not be checked"
        )
    report.say(f"trusted {plural(len(keys), 'hook')} in {config}; Codex lists each as trusted")
    return keys


# ---------------------------------------------------------------- uninstall


def uninstall(
    client: str, workspace: str | os.PathLike[str] = ".", *, user: bool = False
) -> Report:
    report = Report()
    root = Path(workspace).resolve()
    manifest_path = manifest_file(client, root, user)
    manifest = _read_json(manifest_path)
    if not manifest:
        raise InvalidInput(
            f"signoff is not installed for {client} here (no {manifest_path}); nothing to remove"
        )
    target = Path(str(manifest["file"]))
    doc = _read_json(target)
    removed = remove_hook_groups(doc, manifest.get("hooks") or {})
    if removed:
        _write_json(target, doc)
    report.say(f"removed {plural(removed, 'hook group')} from {target}")
    keys = manifest.get("trust") or []
    config = codex_config()
    if keys and config.exists():
        import tomlkit

        text = config.read_text("utf-8")
        tdoc = tomlkit.parse(text)
        state = tdoc.get("hooks", {}).get("state", {})
        for key in keys:
            if key in state:
                del state[key]
        config.write_text(tomlkit.dumps(tdoc), "utf-8")
        report.say(f"removed {plural(len(keys), 'trust record')} from {config}")
    manifest_path.unlink()
    return report


__all__ = ["CLIENTS", "MIN_VERSION", "hook_command", "install", "uninstall"]
