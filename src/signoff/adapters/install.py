"""`signoff install claude-code` and `signoff uninstall claude-code`.

Install merges signoff's hooks into `.claude/settings.json` (or `~/.claude/settings.json`
with `user=True`), keeping everything already there (a backup is written first), sets
the fail-closed switch on each hook (`"onFailure": "block"`: a hook that crashes, times
out or cannot start blocks the call; Claude Code lets it through otherwise), refuses a
Claude Code too old to honour that switch, writes the ask strategy to signoff's settings
and imports Claude Code's own `permissions` rules (the same syntax) into them, so one
rule set governs both. What it added is listed in a manifest under signoff's own state,
and uninstall removes exactly that. Running install twice changes nothing the second time.
With `http=True` the hooks post to `signoff serve`, with the hook's own credential (see
`hook_credential`): install makes it in the store the server reads.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..exceptions import ConfigurationError, InvalidInput
from ..i18n import plural
from ..protected import user_config_dir
from ..rules import parse_rule
from ..settings import PROJECT_FILE, parse_settings, user_settings_path
from .core import DEFAULT_WAIT, STRATEGIES

MIN_VERSION = (2, 1, 295)  # the first Claude Code with "onFailure": "block"
EVENTS = ("PreToolUse", "PermissionRequest", "PostToolUse", "PostToolUseFailure")
DEFAULT_URL = "http://127.0.0.1:8765/hooks/claude-code"
TOKEN_ENV = "SIGNOFF_HOOK_TOKEN"


@dataclass
class Report:
    """What install or uninstall did, for the person who ran it."""

    lines: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def say(self, line: str) -> None:
        self.lines.append(line)

    def warn(self, line: str) -> None:
        self.warnings.append(line)


def client_version(claude: str) -> tuple[int, int, int] | None:
    """`PROGRAM --version` as numbers (any client: claude, codex, gemini), or None when
    there is no such program."""
    try:
        done = subprocess.run(
            [claude, "--version"],
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = re.search(r"(\d+)\.(\d+)\.(\d+)", done.stdout or "")
    if done.returncode != 0 or match is None:
        raise ConfigurationError(
            f"`{claude} --version` did not print a version (exit {done.returncode}): "
            f"{(done.stdout or done.stderr).strip()[:200]!r}"
        )
    major, minor, patch = (int(g) for g in match.groups())
    return major, minor, patch


def check_client(claude: str, report: Report) -> None:
    version = client_version(claude)
    if version is None:
        report.warn(
            f"could not run `{claude} --version`: make sure Claude Code is "
            f"{'.'.join(map(str, MIN_VERSION))} or later, or its hooks fail open"
        )
        return
    if version < MIN_VERSION:
        raise ConfigurationError(
            f"Claude Code {'.'.join(map(str, version))} cannot fail closed: a hook that "
            "crashes or times out lets the call through before "
            f'{".".join(map(str, MIN_VERSION))} ("onFailure": "block"). Upgrade it '
            "(npm install -g @anthropic-ai/claude-code) and install again; nothing was written"
        )
    report.say(f"Claude Code {'.'.join(map(str, version))} can fail closed")


def default_command() -> str:
    """How Claude Code starts this signoff: its own script, else this interpreter.

    The hook runs in the agent's project; `python -m` would put that directory first on
    `sys.path`, so a `json.py` or `signoff/` the agent wrote there would run in the hook
    in place of the real one. `-P` (Python 3.11+) leaves the working directory out."""
    script = sys.argv[0] if sys.argv else ""
    if os.path.basename(script) == "signoff" and os.path.isfile(script):
        return shlex.join([os.path.abspath(script), "hook", "claude-code"])
    return shlex.join([sys.executable, "-P", "-m", "signoff", "hook", "claude-code"])


def hook_entries(*, command: str, http: bool, url: str, wait: float) -> dict[str, dict[str, Any]]:
    """The matcher group signoff adds under each event."""
    timeout = int(max(wait + 120, 900))  # longer than an inbox wait: the deadline is ours
    groups: dict[str, dict[str, Any]] = {}
    for event in EVENTS:
        judging = event in ("PreToolUse", "PermissionRequest")
        hook: dict[str, Any]
        if http:
            hook = {
                "type": "http",
                "url": url,
                "headers": {"Authorization": f"Bearer ${TOKEN_ENV}"},
                "allowedEnvVars": [TOKEN_ENV],
            }
        else:
            hook = {"type": "command", "command": command}
        hook["timeout"] = timeout if judging else 120
        hook["onFailure"] = "block"
        if judging:
            hook["statusMessage"] = "signoff: checking policy"
        groups[event] = {"matcher": "*", "hooks": [hook]}
    return groups


def settings_file(workspace: Path, user: bool) -> Path:
    return (
        Path.home() / ".claude" / "settings.json"
        if user
        else workspace / ".claude" / "settings.json"
    )


def manifest_file(workspace: Path, user: bool) -> Path:
    if user:
        return Path(user_config_dir()) / "install" / "claude-code-user.json"
    return workspace / ".signoff" / "install" / "claude-code.json"


def signoff_settings(workspace: Path, user: bool) -> Path:
    return user_settings_path() if user else workspace / PROJECT_FILE


def _read_json(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        doc = json.loads(path.read_text("utf-8"))
    except ValueError as exc:
        raise InvalidInput(
            f"{path}: not valid JSON ({exc}); fix it first, nothing was written"
        ) from exc
    if not isinstance(doc, dict):
        raise InvalidInput(f"{path}: not a JSON object; nothing was written")
    return doc


def _write_json(path: Path, doc: Mapping[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".signoff-tmp")
    tmp.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", "utf-8")
    os.replace(tmp, path)


def install(
    workspace: str | os.PathLike[str] = ".",
    *,
    ask: str | None = None,
    user: bool = False,
    http: bool = False,
    url: str = DEFAULT_URL,
    command: str | None = None,
    claude: str = "claude",
    import_rules: bool = True,
    check: bool = True,
    db: str | None = None,
) -> Report:
    """`db`: with `http`, the store `signoff serve` reads, where the hook's credential is
    made (default: $SIGNOFF_DB, else the workspace's)."""
    report = Report()
    root = Path(workspace).resolve()
    if ask is not None and ask not in STRATEGIES:
        raise InvalidInput(f"--ask {ask!r} is not one of {', '.join(STRATEGIES)}")
    if check:
        check_client(claude, report)  # before anything is written
    target = settings_file(root, user)
    doc = _read_json(target)
    manifest_path = manifest_file(root, user)
    manifest = _read_json(manifest_path)
    made_file = not target.exists() or bool(manifest.get("made_settings_file"))
    hooks = doc.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise InvalidInput(f'{target}: "hooks" is not an object; nothing was written')
    wanted = hook_entries(
        command=command or default_command(), http=http, url=url, wait=DEFAULT_WAIT
    )
    added: dict[str, list[Any]] = {k: list(v) for k, v in (manifest.get("hooks") or {}).items()}
    changed = False
    for event, group in wanted.items():
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise InvalidInput(f"{target}: hooks.{event} is not a list; nothing was written")
        previous = [g for g in added.get(event, []) if g != group and g in groups]
        for old in previous:  # an earlier install with other options: replaced
            groups.remove(old)
            changed = True
        if group not in groups:
            groups.append(group)
            changed = True
        added[event] = [group]
    hook_account = None
    if http:  # before anything is written: a credential that cannot be made stops here
        from ..store import default_url
        from . import hook_credential

        store_url = db or default_url(root)
        name, made = hook_credential.ensure(store_url)
        hook_account = {"name": name, "store": store_url} if made else manifest.get("hook")
        report.say(
            f"the hook's credential: {name} (role hook: it posts hook events and opens "
            f"nothing else), {'made' if made else 'already'} in {store_url}"
        )
    if changed:
        if target.exists():
            backup = target.with_name(f"{target.name}.signoff-backup-{int(time.time())}")
            backup.write_bytes(target.read_bytes())
            report.say(f"backed up {target} to {backup.name}")
        _write_json(target, doc)
        report.say(f"wrote {target} (hooks {', '.join(EVENTS)} -> signoff, onFailure=block)")
    else:
        report.say(f"{target} already has signoff's hooks")
    toml_path = signoff_settings(root, user)
    rules, strategy_added, created = _update_signoff_settings(
        toml_path, ask, _claude_rules(root, user, report) if import_rules else {}, report
    )
    manifest = {
        "v": 1,
        "settings": str(target),
        "hooks": added,
        "rules": {
            k: sorted(set(rules.get(k, [])) | set((manifest.get("rules") or {}).get(k, [])))
            for k in ("allow", "ask", "deny")
        },
        "ask_added": strategy_added or bool(manifest.get("ask_added")),
        "created": sorted(set(created) | set(manifest.get("created") or [])),
        "made_settings_file": made_file,
        **({"hook": hook_account} if hook_account else {}),
    }
    _write_json(manifest_path, manifest)
    if http:
        from .hook_credential import export_line

        report.say(
            f"the hooks post to {url}: run `signoff serve` on that store, and start Claude "
            f"Code with the hook's token in its environment: {export_line()}"
        )
    return report


def _claude_rules(root: Path, user: bool, report: Report) -> dict[str, list[str]]:
    """Claude Code's own permissions rules, those signoff can read."""
    files = (
        [Path.home() / ".claude" / "settings.json"]
        if user
        else [root / ".claude" / "settings.json", root / ".claude" / "settings.local.json"]
    )
    found: dict[str, list[str]] = {"allow": [], "ask": [], "deny": []}
    for path in files:
        perms = _read_json(path).get("permissions")
        if not isinstance(perms, dict):
            continue
        for kind in found:
            for rule in perms.get(kind) or []:
                if not isinstance(rule, str):
                    continue
                try:
                    parse_rule(rule, source=str(path))
                except InvalidInput as exc:
                    report.warn(f"not imported from {path.name}: {exc}")
                    continue
                if rule not in found[kind]:
                    found[kind].append(rule)
    return found


def _update_signoff_settings(
    path: Path, ask: str | None, rules: Mapping[str, Sequence[str]], report: Report
) -> tuple[dict[str, list[str]], bool, list[str]]:
    import tomlkit

    text = path.read_text("utf-8") if path.exists() else ""
    if text:
        parse_settings(text, str(path))  # refuse to touch a file that is already broken
    doc = tomlkit.parse(text)
    added: dict[str, list[str]] = {"allow": [], "ask": [], "deny": []}
    created: list[str] = []  # tables and lists made here: uninstall takes them away if empty
    have_rules = {
        kind: {r for r in rules.get(kind, ()) if r}
        - {str(i) for i in (doc.get("permissions") or {}).get(kind, [])}
        for kind in ("deny", "ask", "allow")
    }
    if any(have_rules.values()):
        perms = doc.get("permissions")
        if perms is None:
            perms = tomlkit.table()
            doc["permissions"] = perms
            created.append("permissions")
        for kind in ("deny", "ask", "allow"):
            wanted = [r for r in rules.get(kind, ()) if r in have_rules[kind]]
            if not wanted:
                continue
            current = perms.get(kind)
            if current is None:
                current = tomlkit.array()
                current.multiline(True)
                perms[kind] = current
                created.append(f"permissions.{kind}")
            for rule in wanted:
                if rule not in {str(item) for item in current}:
                    current.append(rule)
                    added[kind].append(rule)
    hooks = doc.get("hooks")
    strategy_added = False
    if hooks is None:
        hooks = tomlkit.table()
        doc["hooks"] = hooks
        created.append("hooks")
    if ask is not None or "ask" not in hooks:
        if "ask" not in hooks:
            strategy_added = True
        hooks["ask"] = ask or "native"
    new_text = tomlkit.dumps(doc)
    if new_text and not new_text.endswith("\n"):
        new_text += "\n"
    parse_settings(new_text, str(path))  # never write what signoff could not read back
    if new_text != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(new_text, "utf-8")
        os.replace(tmp, path)
    count = sum(len(v) for v in added.values())
    if count:
        report.say(f"imported {plural(count, 'rule')} from Claude Code's permissions into {path}")
    report.say(f"ask strategy: {hooks['ask']} ({path})")
    return added, strategy_added, created


def remove_hook_groups(doc: dict[str, Any], added: Mapping[str, Any]) -> int:
    """Take the hook groups install `added` (by event) out of a client's settings `doc`,
    dropping events and the `hooks` table left empty; how many groups went."""
    hooks = doc.get("hooks")
    removed = 0
    if not isinstance(hooks, dict):
        return removed
    for event, groups in added.items():
        present = hooks.get(event)
        if not isinstance(present, list):
            continue
        for group in groups:
            while group in present:
                present.remove(group)
                removed += 1
        if not present:
            del hooks[event]
    if not hooks:
        del doc["hooks"]
    return removed


def uninstall(workspace: str | os.PathLike[str] = ".", *, user: bool = False) -> Report:
    """Remove exactly what install added (its hooks, imported rules, the ask key)."""
    report = Report()
    root = Path(workspace).resolve()
    manifest_path = manifest_file(root, user)
    manifest = _read_json(manifest_path)
    if not manifest:
        raise InvalidInput(
            f"signoff is not installed for Claude Code here (no {manifest_path}); nothing to remove"
        )
    target = Path(str(manifest.get("settings") or settings_file(root, user)))
    doc = _read_json(target)
    removed = remove_hook_groups(doc, manifest.get("hooks") or {})
    if not doc and manifest.get("made_settings_file") and target.exists():
        target.unlink()  # install made it, and nothing else is in it
        report.say(f"removed {target}, which install had made")
    elif removed:
        _write_json(target, doc)
    report.say(f"removed {plural(removed, 'hook group')} from {target}")
    _remove_from_signoff_settings(
        signoff_settings(root, user),
        manifest.get("rules") or {},
        bool(manifest.get("ask_added")),
        list(manifest.get("created") or []),
        report,
    )
    hook = manifest.get("hook")
    if isinstance(hook, dict) and isinstance(hook.get("name"), str):
        from . import hook_credential

        if hook_credential.remove(str(hook.get("store")), hook["name"]):
            report.say(f"removed the hook's credential {hook['name']} from {hook.get('store')}")
    manifest_path.unlink()
    return report


def _remove_from_signoff_settings(
    path: Path,
    rules: Mapping[str, Sequence[str]],
    ask_added: bool,
    created: Sequence[str],
    report: Report,
) -> None:
    if not path.exists():
        return
    import tomlkit

    text = path.read_text("utf-8")
    doc = tomlkit.parse(text)
    perms = doc.get("permissions")
    count = 0
    if perms is not None:
        for kind, wanted in rules.items():
            current = perms.get(kind)
            if current is None:
                continue
            for index in reversed(range(len(current))):
                if str(current[index]) in wanted:
                    del current[index]
                    count += 1
    hooks = doc.get("hooks")
    if ask_added and hooks is not None and "ask" in hooks:
        del hooks["ask"]
    for name in sorted(created, key=len, reverse=True):  # lists before their tables
        table, _, key = name.partition(".")
        holder = doc.get(table)
        if key and holder is not None and key in holder and len(holder[key]) == 0:
            del holder[key]
        elif not key and holder is not None and len(holder) == 0:
            del doc[table]
    new_text = tomlkit.dumps(doc)
    if new_text != text:
        parse_settings(new_text, str(path))
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(new_text, "utf-8")
        os.replace(tmp, path)
    if count:
        report.say(f"removed {plural(count, 'imported rule')} from {path}")


__all__ = ["DEFAULT_URL", "MIN_VERSION", "Report", "install", "uninstall"]
