"""The attacker: programs that try to leave the sandbox, run by test_attack_sandbox.py.

Copied into a scratch folder and run there with the system's Python (standard library
only), contained, as an unprivileged user. Each attempt prints one JSON line:
{"attempt": NAME, "escaped": BOOL, "detail": TEXT}. "escaped" means the attempt did what it
tried (the same program run uncontained, as the control, must escape); the test also
checks from outside that nothing changed, whatever this program says.

Usage: python3 sandbox_payloads.py ATTACK ARGS_JSON
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import signal
import socket
import sys
import time
from collections.abc import Callable
from typing import Any

ATTACKS: dict[str, Callable[[dict[str, Any]], None]] = {}


def attack(function: Callable[[dict[str, Any]], None]) -> Callable[[dict[str, Any]], None]:
    ATTACKS[function.__name__] = function
    return function


def report(attempt: str, escaped: bool, detail: object = "") -> None:
    print(json.dumps({"attempt": attempt, "escaped": escaped, "detail": str(detail)}), flush=True)
    if not escaped:  # as a program says it failed: on stderr
        print(f"{attempt}: {detail}", file=sys.stderr, flush=True)


def try_write(attempt: str, path: str, text: str = "pwned") -> None:
    try:
        with open(path, "w") as handle:
            handle.write(text)
    except OSError as exc:
        report(attempt, False, exc)
    else:
        report(attempt, True, path)


def try_read(attempt: str, path: str, canary: str) -> None:
    try:
        with open(path, errors="replace") as handle:
            text = handle.read()
    except OSError as exc:
        report(attempt, False, exc)
    else:
        report(attempt, canary in text, f"{path}: {len(text)} characters")


# --------------------------------------------------------------------------- network


@attack
def connect_out(args: dict[str, Any]) -> None:
    with socket.socket() as sock:  # the host's loopback listener
        sock.settimeout(3)
        try:
            sock.connect(("127.0.0.1", args["port"]))
            sock.sendall(b"escaped")
        except OSError as exc:
            report("tcp to the host's loopback", False, exc)
        else:
            report("tcp to the host's loopback", True, args["port"])
    for family, kind, proto in (
        (socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP),
        (socket.AF_PACKET, socket.SOCK_RAW, 0),
    ):
        try:
            socket.socket(family, kind, proto).close()
        except OSError as exc:
            report(f"raw socket {family.name}", False, exc)
        else:
            report(f"raw socket {family.name}", True, "opened")
    try:
        found = socket.getaddrinfo(args["host"], 443)
    except OSError as exc:
        report("dns lookup", False, exc)
    else:
        report("dns lookup", True, found[:1])
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
        try:
            udp.sendto(b"\0" * 12, ("9.9.9.9", 53))
        except OSError as exc:
            report("udp to a public resolver", False, exc)
        else:
            report("udp to a public resolver", True, "sent")
    for name, address in (("abstract", "\0" + args["abstract"]), ("path", args["unix_path"])):
        with socket.socket(socket.AF_UNIX) as unix:
            unix.settimeout(3)
            try:
                unix.connect(address)
                unix.sendall(b"escaped")
            except OSError as exc:
                report(f"unix socket ({name}) on the host", False, exc)
            else:
                report(f"unix socket ({name}) on the host", True, name)


# --------------------------------------------------------------------------- writing outside


@attack
def write_outside(args: dict[str, Any]) -> None:
    outside = args["outside"]
    try_write("absolute path", os.path.join(outside, "abs.txt"))
    try_write("overwrite a file outside", os.path.join(outside, "keep.txt"))
    rel = os.path.relpath(os.path.join(outside, "dotdot.txt"), os.getcwd())
    try_write("relative path with ..", rel)
    try_write("a link planted before the run", os.path.join("planted", "via-link.txt"))
    try:
        os.symlink(outside, "made-link")
    except OSError as exc:
        report("make a link to outside", False, exc)
    try_write("a link made in the run", os.path.join("made-link", "via-made.txt"))
    try:
        os.link(os.path.join(outside, "keep.txt"), "hard-link")
        with open("hard-link", "a") as handle:
            handle.write("pwned")
    except OSError as exc:
        report("hard link to a file outside", False, exc)
    else:
        report("hard link to a file outside", True, "appended")
    try_write("/proc/self/root", "/proc/self/root" + os.path.join(outside, "proc-root.txt"))
    try_write("/proc/PID/cwd", f"/proc/{args['pid']}/cwd/proc-cwd.txt")
    try_write("/proc/PID/root", f"/proc/{args['pid']}/root{outside}/proc-pid-root.txt")
    try_write("the home folder", os.path.join(args["home"], "home.txt"))
    try_write("a start-up file", os.path.join(args["home"], ".bashrc"))
    try_write("the private /tmp", os.path.join("/tmp", args["tmp_name"]))


@attack
def link_swapped_during_run(args: dict[str, Any]) -> None:
    """Copies `sub` into the stage, waits while the harness swaps it for a link to the
    outside folder, then writes into it again."""
    with open(os.path.join("sub", "first.txt"), "w") as handle:
        handle.write("inside")
    print("ready", flush=True)
    sys.stdin.readline()  # the harness has swapped `sub` for a link
    try_write("through a link swapped in meanwhile", os.path.join("sub", "second.txt"))


# --------------------------------------------------------------------------- secrets


@attack
def read_secrets(args: dict[str, Any]) -> None:
    canary = args["canary"]
    for path in args["paths"]:
        try_read(f"read {path}", path, canary)
    leaked = sorted(name for name, value in os.environ.items() if canary in value)
    report("secret-named variables", bool(leaked), leaked)
    try_read("the environment of pid 1", "/proc/1/environ", canary)
    libc = ctypes.CDLL(None, use_errno=True)
    keyctl = {"x86_64": 250, "aarch64": 219}.get(os.uname().machine)
    if keyctl is not None:  # KEYCTL_SEARCH the session keyring for the harness's key
        key = libc.syscall(keyctl, 10, -3, b"user", args["key_name"].encode(), 0)
        report("the session keyring", key > 0, ctypes.get_errno() if key < 0 else key)


# --------------------------------------------------------------------------- protected files


@attack
def change_protected(args: dict[str, Any]) -> None:
    try_write("add a git hook", os.path.join(".git", "hooks", "pre-commit"), "#!/bin/sh\n")
    try_write("change a git hook", os.path.join(".git", "hooks", "post-checkout"), "x")
    try:
        with open(os.path.join(".git", "config"), "a") as handle:
            handle.write("[core]\n\tfsmonitor = touch pwned\n")
    except OSError as exc:
        report("append to .git/config", False, exc)
    else:
        report("append to .git/config", True, "appended")
    try:
        os.rename(os.path.join(".git", "hooks"), os.path.join(".git", "hooks-old"))
    except OSError as exc:
        report("move .git/hooks away", False, exc)
    else:
        report("move .git/hooks away", True, "moved")
    for folder in (".claude", ".vscode", ".signoff", ".codex", ".gemini", ".cursor"):
        try:
            os.makedirs(folder, exist_ok=True)
        except OSError as exc:
            report(f"create {folder}/", False, exc)
        name = "tasks.json" if folder == ".vscode" else "settings.json"
        try_write(f"write {folder}/{name}", os.path.join(folder, name), '{"pwned": true}')
    try_write("write .claude/settings.local.json", ".claude/settings.local.json", "{}")
    try_write("read .signoff", os.path.join(".signoff", "settings.local.toml"))
    for path in args["state"]:
        try_write(f"write signoff state {path}", path)


@attack
def change_protected_late(args: dict[str, Any]) -> None:
    """What can be written inside but must not land: a file that did not exist, nested
    git folders, and the whole .git replaced."""
    try_write("create .mcp.json", ".mcp.json", '{"mcpServers": {}}')
    os.makedirs(os.path.join("sub", ".git", "hooks"), exist_ok=True)
    try_write("a nested repository's hook", "sub/.git/hooks/post-checkout", "#!/bin/sh\n")
    try_write("a nested repository's config", "sub/.git/config", "[core]\n")
    os.makedirs(os.path.join("deep", ".claude"), exist_ok=True)
    try_write("a nested client folder", "deep/.claude/settings.json", "{}")
    # git sent elsewhere: a .git file, a .git link, a bare repository's parts
    for folder in ("evil-gitdir/hooks", "gitfile-dir", "linked-dir", "bare/hooks"):
        os.makedirs(folder, exist_ok=True)
    try_write("a git folder's hook", "evil-gitdir/hooks/post-checkout", "#!/bin/sh\n")
    try_write("a git folder's config", "evil-gitdir/config", "[core]\n")
    try_write("a git folder's HEAD", "evil-gitdir/HEAD", "ref: refs/heads/main\n")
    try_write("a .git file", "gitfile-dir/.git", "gitdir: ../evil-gitdir\n")
    os.symlink("../evil-gitdir", "linked-dir/.git")
    report("a .git link", True, "made inside")
    try_write("a bare repository's HEAD", "bare/HEAD", "ref: refs/heads/main\n")
    try_write("a bare repository's config", "bare/config", "[core]\n\tbare = true\n")
    try_write("a bare repository's hook", "bare/hooks/pre-commit", "#!/bin/sh\n")


@attack
def write_paths(args: dict[str, Any]) -> None:
    for path in args["paths"]:
        try_write(f"write {path}", path, "pwned")


# --------------------------------------------------------------------------- processes


@attack
def leave_background(args: dict[str, Any]) -> None:
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            signal.signal(signal.SIGHUP, signal.SIG_IGN)
            os.execv("/bin/sh", ["/bin/sh", "-c", args["script"], args["marker"]])
        os._exit(0)
    os.wait()
    report("start a detached process", True, "started (it must not outlive the run)")


@attack
def reach_processes(args: dict[str, Any]) -> None:
    pid = args["pid"]
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError as exc:
        report("kill a process outside", False, exc)
    else:
        report("kill a process outside", True, pid)
    libc = ctypes.CDLL(None, use_errno=True)
    attached = libc.ptrace(16, pid, None, None)  # PTRACE_ATTACH
    report("ptrace a process outside", attached == 0, errno.errorcode.get(ctypes.get_errno()))
    if args.get("everyone"):  # never uncontained: it would reach the user's others
        try:
            os.kill(-1, signal.SIGTERM)  # every process this user may signal
        except OSError as exc:
            report("signal every process", False, exc)
        else:
            report("signal every process", True, "sent (only the sandbox's may get it)")
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            report("see a process outside", True, handle.read()[:40])
    except OSError as exc:
        report("see a process outside", False, exc)


@attack
def gain_privilege(args: dict[str, Any]) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    checks = [] if os.getuid() == 0 else [("setuid(0)", lambda: libc.setuid(0))]
    for name, call in (
        *checks,
        ("mount a tmpfs", lambda: libc.mount(b"none", b"/mnt", b"tmpfs", 0, None)),
        ("unshare a user namespace", lambda: libc.unshare(0x10000000)),
        ("unshare a mount namespace", lambda: libc.unshare(0x00020000)),
        ("chroot", lambda: libc.chroot(b"/tmp")),
    ):
        result = call()
        report(name, result == 0, errno.errorcode.get(ctypes.get_errno(), result))
    with open("/proc/self/status") as handle:
        status = dict(line.split(":\t", 1) for line in handle.read().splitlines() if ":\t" in line)
    report("capabilities", int(status["CapEff"].strip(), 16) != 0, status["CapEff"].strip())
    report("no_new_privs", status["NoNewPrivs"].strip() != "1", status["NoNewPrivs"].strip())
    helper = args.get("setuid_program")
    if helper:  # a set-user-id root program that only root may run successfully
        pid = os.fork()
        if pid == 0:
            os.execv(helper, [helper, "-t", "tmpfs", "none", "/mnt"])
        _, status_code = os.waitpid(pid, 0)
        report(f"set-user-id {helper}", os.waitstatus_to_exitcode(status_code) == 0, helper)


@attack
def exhaust_memory(args: dict[str, Any]) -> None:
    try:
        hog = bytearray(args["bytes"])
        hog[::4096] = b"x" * len(hog[::4096])
    except MemoryError as exc:
        report("allocate past the limit", False, f"MemoryError {exc}")
    else:
        report("allocate past the limit", True, len(hog))


@attack
def exhaust_processes(args: dict[str, Any]) -> None:
    children = []
    try:
        for _ in range(args["count"]):
            pid = os.fork()
            if pid == 0:
                time.sleep(30)
                os._exit(0)
            children.append(pid)
    except OSError as exc:
        report("fork past the limit", False, f"{len(children)} forks, then {exc}")
    else:
        report("fork past the limit", True, f"{len(children)} forks")
    for pid in children:
        os.kill(pid, signal.SIGKILL)


@attack
def control_write(args: dict[str, Any]) -> None:
    """The workspace is writable: create, change, delete, make a folder."""
    with open("created.txt", "w") as handle:
        handle.write("made in the sandbox")
    with open("existing.txt", "a") as handle:
        handle.write(" and changed")
    os.unlink("doomed.txt")
    os.makedirs(os.path.join("made", "deeper"))
    with open(os.path.join("made", "deeper", "leaf.txt"), "w") as handle:
        handle.write("leaf")
    report("write the workspace", False, "written")
    sys.exit(args.get("exit", 0))


if __name__ == "__main__":
    ATTACKS[sys.argv[1]](json.loads(sys.argv[2]) if len(sys.argv) > 2 else {})
