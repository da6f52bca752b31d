"""Issue 11, items 1 and 3, as properties: whatever a command built from a grammar of file
operations, or a declared tool called with any spelling of a path, is allowed to do
without a person, it never touches protected or denied paths.

Each example is judged by the real policy and, when the verdict is allow or notify, RUN
for real (bash, or the built-in workspace tool) in a fresh copy of a tree that holds
signoff's state, a denied secret (`Read(secrets/**)`) and denied sources (`Edit(src/**)`).
Then: signoff's state and the sources are byte for byte what they were (nothing new
appeared among them), and the canaries of the state and the secret are in no output and
in no file outside their own directories.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from signoff.models import ToolCall
from signoff.policy import Policy
from signoff.settings import Settings
from signoff.workspace import Workspace

STATE_CANARY = "STATE-CANARY-31d8"
SECRET_CANARY = "SECRET-CANARY-77e2"
RULES = Settings.from_rules(deny=["Read(secrets/**)", "Edit(src/**)"])
GUARDED = (".signoff", "secrets", "src")  # their contents must not leak out of them
UNCHANGED = (".signoff", "src")  # must not change (writing secrets/ is not denied, reading is)

READS = [
    ".signoff/settings.local.toml",
    ".signoff/signoff.db",
    ".signoff",
    ".signof?/*",
    ".s*/*",
    ".*/settings.local.toml",
    ".signof[f]/settings.local.toml",
    "src/../.signoff/signoff.db",
    "{ws}/.signoff/settings.local.toml",
    "lnk/settings.local.toml",
    "secrets/k",
    "secrets",
    "secre?s/k",
    "*/k",
    "s*/k",
    "{ws}/secrets/k",
    "x/k",
    "x/settings.local.toml",
    "x",
    "evil.txt",
    "docs/readme.md",
    "stage/sg/settings.local.toml",
    "stage/sg/.",
    "stage/sg/",
    ".{signoff,docs}/settings.local.toml",
]
WRITES = [
    ".signoff/settings.local.toml",
    ".signoff",
    ".signoff/new.toml",
    ".signof?/",
    ".s*/settings.local.toml",
    ".*/x",
    "{ws}/.signoff/settings.local.toml",
    "lnk/settings.local.toml",
    "src/a.py",
    "src",
    "src/",
    "sr?/a.py",
    "s*/a.py",
    "src/../src/a.py",
    "{ws}/src/a.py",
    "x",
    "x/settings.local.toml",
    "x/a.py",
    "docs/out",
    "docs",
    "out.txt",
    ".",
    "d/l",
]
DIRS = [".signoff", "src", "secrets", "docs", "stage", ".signof?", "x", "lnk"]
TEMPLATES = [
    "cat {r}",
    "head -c 300 {r}",
    "grep -a . {r}",
    "strings {r}",
    "base64 {r}",
    "cp {r} {w}",
    "cp -r {r} {w}",
    "mv {r} {w}",
    "tee {w} < {r}",
    "cat {r} > {w}",
    "cat {r} >> {w}",
    "sed -i s/a/b/ {w}",
    "ln -s {r} {w}",
    "ln -s {R} {w}",
    "dd if={r} of={w} status=none",
    "rsync -a {r} {w}",
    "install {r} {w}",
    "sort -o {w} {r}",
    "touch {w}",
    "echo hi > {w}",
    "mkdir -p {w}",
    "cd {d} && cat {r}",
    "cd {d} && cp {r} {w}",
    "cd {d} && echo x > {w}",
    "tar cf - {r} | tar xf - -C {w}",
    "find {d} -name k",
    # the same operations in other syntax: heredocs, functions, groups, substitutions
    "cat <<EOF > {w}\nx\nEOF",
    "f() {{ cat {r}; }} > {w}; f",
    'echo "$(< {r})"',
    "cat <(cat {r})",
    "{{ cat {r}; }} > {w}",
    "(cd {d}; cat {r})",
    "echo x | tee -a {w}",
    "find {d} -type f -exec cat {{}} +",
    "ls {d} | xargs cat",
    "while read l; do :; done < {r}",
    "cp {r} {w} 2>/dev/null || cat {r}",
    "bash -c 'cat {r} > {w}'",
]
JOINERS = [" && ", "; ", " || "]
# Ordinary operands, drawn twice as often, so that many commands are allowed and run.
SAFE_READS = [
    "evil.txt",
    "docs/readme.md",
    "docs",
    "stage/sg/settings.local.toml",
    "x",
    "out.txt",
    "docs/*",
    "*.txt",
    "stage",
    "d/l",
]
SAFE_WRITES = ["docs/out", "out.txt", "x", "d/l", "docs/", "stage/new", "x/y", "docs/*"]
SAFE_DIRS = ["docs", "stage", "x", "d", "stage/sg"]


def operand(risky: list[str], safe: list[str]) -> st.SearchStrategy[str]:
    return st.one_of(st.sampled_from(risky), st.sampled_from(safe), st.sampled_from(safe))


@contextmanager
def tree() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="h1prop-") as tmp:
        ws = Path(tmp).resolve() / "ws"
        for folder in (".signoff", "secrets", "src", "docs", "stage/sg", "home"):
            (ws / folder).mkdir(parents=True)
        (ws / ".signoff" / "settings.local.toml").write_text(f"# {STATE_CANARY}\n")
        (ws / ".signoff" / "signoff.db").write_bytes(f"SQLite {STATE_CANARY}".encode())
        (ws / "secrets" / "k").write_text(f"key={SECRET_CANARY}\n")
        (ws / "src" / "a.py").write_text("print('a')\n")
        (ws / "docs" / "readme.md").write_text("docs\n")
        (ws / "evil.txt").write_text('[permissions]\ndefault_mode = "auto"\n')
        (ws / "stage" / "sg" / "settings.local.toml").write_text('default_mode = "auto"\n')
        (ws / "lnk").symlink_to(ws / ".signoff")
        yield ws


def snapshot(ws: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for guarded in UNCHANGED:
        for dirpath, _dirnames, filenames in os.walk(ws / guarded):
            out[dirpath] = "dir"
            for name in filenames:
                path = Path(dirpath) / name
                out[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def leaked_into_files(ws: Path) -> list[str]:
    found = []
    for dirpath, _dirnames, filenames in os.walk(ws):
        rel = os.path.relpath(dirpath, ws)
        if rel.split(os.sep)[0] in GUARDED:
            continue
        for name in filenames:
            path = Path(dirpath) / name
            if path.is_symlink():
                continue
            data = path.read_bytes()
            if STATE_CANARY.encode() in data or SECRET_CANARY.encode() in data:
                found.append(str(path))
    return found


def policy_for(ws: Path) -> Policy:
    return Policy(RULES, workspace=ws, home=str(ws / "home"))


def fill(text: str, ws: Path) -> str:
    return text.replace("{ws}", str(ws))


@st.composite
def commands(draw: st.DrawFn) -> str:
    parts = []
    for _ in range(draw(st.integers(1, 3))):
        template = draw(st.sampled_from(TEMPLATES))
        parts.append(
            template.format(
                r=draw(operand(READS, SAFE_READS)),
                R=draw(
                    st.sampled_from(
                        [
                            "../.signoff",
                            ".signoff",
                            "../secrets",
                            "/",
                            "docs",
                            "../docs",
                            "evil.txt",
                        ]
                    )
                ),
                w=draw(operand(WRITES, SAFE_WRITES)),
                d=draw(operand(DIRS, SAFE_DIRS)),
            )
        )
    joined = parts[0]
    for part in parts[1:]:
        joined += draw(st.sampled_from(JOINERS)) + part
    return joined


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(commands())
def test_no_allowed_shell_command_touches_protected_or_denied_paths(command: str) -> None:
    with tree() as ws:
        text = fill(command, ws)
        verdict = policy_for(ws).evaluate(ToolCall("execute_command", {"command": text}))
        event(f"verdict {verdict.effect}")
        if verdict.effect not in ("allow", "notify"):
            return
        before = snapshot(ws)
        done = subprocess.run(
            ["bash", "-c", text],
            cwd=ws,
            capture_output=True,
            stdin=subprocess.DEVNULL,
            timeout=20,
            env={
                "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                "HOME": str(ws / "home"),
                "LC_ALL": "C",
            },
        )
        output = done.stdout + done.stderr
        assert STATE_CANARY.encode() not in output, (text, verdict)
        assert SECRET_CANARY.encode() not in output, (text, verdict)
        assert snapshot(ws) == before, (text, verdict)
        assert leaked_into_files(ws) == [], (text, verdict)


PATH_SPELLINGS = [
    ".signoff/settings.local.toml",
    "./.signoff/settings.local.toml",
    ".signoff//signoff.db",
    "src/../.signoff/settings.local.toml",
    "docs/../../ws/.signoff/signoff.db",
    "lnk",
    "lnk/settings.local.toml",
    "lnk/../secrets/k",
    "{ws}/.signoff/signoff.db",
    "secrets/k",
    "./secrets//k",
    "docs/../secrets/k",
    "{ws}/secrets/k",
    "src/a.py",
    "./src/a.py",
    "docs/../src/a.py",
    "{ws}/src/a.py",
    ".SIGNOFF/x",
    "docs/readme.md",
    "docs/new.md",
    ".",
    "secrets",
    ".signoff",
    "src",
    "docs",
]


@st.composite
def declared_calls(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    path = draw(st.sampled_from(PATH_SPELLINGS))
    name = draw(
        st.sampled_from(
            [
                "read_file",
                "list_dir",
                "search_code",
                "write_file",
                "edit_file",
                "create_project",
                "delete_file",
            ]
        )
    )
    if name in ("read_file", "list_dir", "delete_file"):
        return name, {"path": path}
    if name == "search_code":
        args: dict[str, Any] = {"pattern": "CANARY"}
        if draw(st.booleans()):
            args["path"] = path
        return name, args
    if name == "write_file":
        return name, {"path": path, "content": "x"}
    if name == "edit_file":
        return name, {"path": path, "old": "a", "new": "b"}
    names = draw(
        st.lists(
            st.sampled_from([*PATH_SPELLINGS, "new/x.txt", "../ws/src/b.py"]),
            min_size=1,
            max_size=3,
            unique=True,
        )
    )
    return name, {
        "path": draw(st.sampled_from(["docs", ".", "new", "stage"])),
        "files": {n: "x" for n in names},
    }


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(declared_calls())
def test_no_allowed_declared_call_touches_protected_or_denied_paths(
    drawn: tuple[str, dict[str, Any]],
) -> None:
    name, raw = drawn
    with tree() as ws:
        args = {
            k: (fill(v, ws) if isinstance(v, str) else {fill(n, ws): c for n, c in v.items()})
            for k, v in raw.items()
        }
        policy = policy_for(ws)
        verdict = policy.evaluate(ToolCall(name, args))
        event(f"verdict {verdict.effect}")
        if verdict.effect not in ("allow", "notify"):
            return
        before = snapshot(ws)
        tool = getattr(Workspace(ws, hidden=policy.hidden), name)
        try:
            output = str(tool(**args))
        except Exception as exc:  # the tool's own refusal (no such file, exists, ...)
            output = str(exc)
        assert STATE_CANARY not in output and SECRET_CANARY not in output, (name, args)
        assert snapshot(ws) == before, (name, args, verdict)
        assert leaked_into_files(ws) == [], (name, args)
