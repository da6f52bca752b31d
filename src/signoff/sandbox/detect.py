"""Whether a sandbox can be made here, and why not.

A hook process asks once per tool call, so the answer is kept: in the process, and on
disk (`~/.cache/signoff/containment.json`) under a key of what decides it (the programs'
paths and times, the kernel release, the user, the user-namespace switches). A stale
"available" is harmless: a run that cannot make its sandbox does not run the command
(and forgets the answer); it never runs it uncontained.

Loaded by hooks: nothing here imports more than `os` and `sys` until the answer is not
kept (then a trial run in a scratch workspace decides it).
"""

from __future__ import annotations

import contextlib
import os
import sys

from ..records import record

# what the cache key reads; a change of any re-runs the trial
_TOOLS = ("bwrap", "unshare", "prlimit", "mount", "sh")
_SWITCHES = (
    "/proc/sys/user/max_user_namespaces",
    "/proc/sys/kernel/unprivileged_userns_clone",
    "/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
)
_FORMAT = 1
_USERNS_HINT = (
    "unprivileged user namespaces look disabled here (sysctl user.max_user_namespaces, "
    "kernel.unprivileged_userns_clone, or AppArmor's "
    "kernel.apparmor_restrict_unprivileged_userns)"
)


@record(frozen=True)
class Containment:
    available: bool
    mechanism: str  # e.g. "bubblewrap 0.8.0 + overlayfs"
    reason: str = ""  # why not, when not available


_known: Containment | None = None


def probe(*, refresh: bool = False) -> Containment:
    """Whether contained commands can run here (kept for the process and on disk)."""
    global _known
    if _known is None or refresh:
        _known = _decide(refresh)
    return _known


def forget() -> None:
    """Drop the kept answer (a run found the sandbox could not be made after all)."""
    global _known
    _known = None
    with contextlib.suppress(OSError):
        os.unlink(cache_file())


def cache_file() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return os.path.join(base, "signoff", "containment.json")


def _decide(refresh: bool) -> Containment:
    if sys.platform == "darwin":
        return Containment(
            False,
            "",
            "macOS: signoff ships a Seatbelt profile (signoff/sandbox/seatbelt.sb) but does "
            "not run commands under it yet; it is untested",
        )
    if not sys.platform.startswith("linux"):
        return Containment(False, "", f"no sandbox for {sys.platform}: only Linux has one")
    from .trusted import which  # only when the answer is not kept in this process

    found = {name: which(name) for name in _TOOLS}
    if found["bwrap"] is None:
        return Containment(
            False,
            "",
            "bubblewrap (bwrap) is not installed (no root-owned bwrap on PATH): install "
            "the package bubblewrap",
        )
    missing = [name for name, path in found.items() if path is None]
    if missing:
        return Containment(
            False, "", f"{', '.join(missing)}: no root-owned program on PATH (util-linux)"
        )
    key = _key(found)
    if not refresh:
        kept = _read(key)
        if kept is not None:
            return kept
    answer = _trial()
    _write(key, answer)
    return answer


def _key(found: dict[str, str | None]) -> list[object]:
    key: list[object] = [_FORMAT, os.uname().release, os.getuid()]
    for path in found.values():
        assert path is not None
        st = os.stat(path)
        key.append([path, st.st_mtime_ns, st.st_size])
    for switch in _SWITCHES:
        try:
            with open(switch, encoding="ascii") as handle:
                key.append(handle.read(64).strip())
        except OSError:
            key.append(None)
    return key


def _read(key: list[object]) -> Containment | None:
    import json

    try:
        with open(cache_file(), encoding="utf-8") as handle:
            doc = json.load(handle)
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict) or doc.get("key") != json.loads(json.dumps(key)):
        return None
    answer = doc.get("answer")
    if not isinstance(answer, dict):
        return None
    available, mechanism, reason = (answer.get(k) for k in ("available", "mechanism", "reason"))
    if not (isinstance(available, bool) and isinstance(mechanism, str)):
        return None
    return Containment(available, mechanism, reason if isinstance(reason, str) else "")


def _write(key: list[object], answer: Containment) -> None:
    import json

    path = cache_file()
    doc = {
        "key": key,
        "answer": {
            "available": answer.available,
            "mechanism": answer.mechanism,
            "reason": answer.reason,
        },
    }
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        temporary = f"{path}.{os.getpid()}.tmp"
        with open(temporary, "w", encoding="utf-8") as handle:
            json.dump(doc, handle)
        os.replace(temporary, path)
    except OSError:
        pass  # not kept: the next process tries again


def _trial() -> Containment:
    """Run `sh -c 'echo ok > probe'` contained in a scratch workspace: available when it
    exits 0 and its file lands."""
    import io
    import subprocess
    import tempfile

    from ..exceptions import SignoffError
    from .launch import find_tools, run
    from .stage import remove_tree

    try:
        tools = find_tools()
        version = subprocess.run(
            [tools.bwrap, "--version"], capture_output=True, text=True, timeout=10, check=False
        ).stdout.strip()
    except (SignoffError, OSError, subprocess.SubprocessError) as exc:
        return Containment(False, "", str(exc))
    mechanism = f"{version or 'bubblewrap'} + overlayfs (user namespaces)"
    workspace = tempfile.mkdtemp(prefix="signoff-probe-")
    errors = io.BytesIO()
    try:
        outcome = run(
            ["/bin/sh", "-c", "echo ok > probe"],
            workspace=workspace,
            cwd=workspace,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=errors,
        )
        landed = os.path.isfile(os.path.join(workspace, "probe"))
    except (SignoffError, OSError, subprocess.SubprocessError) as exc:
        return Containment(False, mechanism, f"a trial run failed: {exc}")
    finally:
        remove_tree(workspace)
    if outcome.started and outcome.exit_code == 0 and landed:
        return Containment(True, mechanism)
    said = (outcome.error or errors.getvalue().decode("utf-8", "replace")).strip()
    first = said.splitlines()[0] if said else f"exit code {outcome.exit_code}"
    hint = f": {_USERNS_HINT}" if "namespace" in said or "unshare" in said else ""
    return Containment(False, mechanism, f"a trial sandbox could not be made ({first}){hint}")


__all__ = ["Containment", "cache_file", "forget", "probe"]
