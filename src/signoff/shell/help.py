"""`--version`, `--help` and their kin: a program asked only to describe itself.

`somecli --help`, `java -version`, `kubectl version` print and exit, whatever the program,
so they are allowed even for programs signoff does not know. Only when the flag is the
whole argument list: any other operand (`find --help -delete`, `xargs tool --help` with
names from its input) is judged as usual, and so are wrappers that could run something
else (`sudo`, a program run by path, a function of the same name).

Where "describe yourself" is not what a spelling means, it is not on the list:

- `-v` / `-V` / `version` are per program: `python -v` is verbose mode reading code from
  its input, `pytest -v` and `ninja -v` run the project's tests and build, `make version`
  and `gradle version` run targets of the project's build file.
- `-version` / `-help` (one dash) are for programs signoff does not know, interpreters
  and the JVM family: a known runner or tool may read them as bundled short flags
  (`-v -e -r …`).
- A shell only with `--version` / `--help`: `bash -h` sets an option and runs its input.
- Interpreters that, given an option they do not know, go on to run the program on their
  input (`tclsh --version`, `erl -version` then boot a shell) are left to their judge.
"""

from __future__ import annotations

from . import knowledge as K

_ANY = frozenset({"--version", "--help", "-h"})
_SINGLE_DASH = frozenset({"-version", "-help"})
_JVM = frozenset({"java", "javac", "jar", "jshell", "keytool", "javap", "jlink", "kotlinc"})
# Interpreters that keep running (reading code from their input) after such a flag.
_STAYS_OPEN = frozenset(
    {"tclsh", "wish", "expect", "erl", "escript", "scala", "kotlin", "osascript", "racket"}
)
# Per program: the other spellings that only print a version or help text.
_OWN_SPELLINGS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "-V",
        (
            "python",
            "python2",
            "python3",
            "pypy",
            "pypy3",
            "deno",
            "uv",
            "uvx",
            "cargo",
            "rustc",
            "rustup",
            "pip",
            "pip3",
        ),
    ),
    (
        "-v",
        (
            "node",
            "nodejs",
            "bun",
            "perl",
            "ruby",
            "php",
            "lua",
            "luajit",
            "julia",
            "npm",
            "pnpm",
            "yarn",
            "gcc",
            "g++",
            "cc",
            "c++",
            "clang",
            "clang++",
            "make",
            "gmake",
            "gradle",
            "mvn",
            "tsc",
            "jest",
            "vitest",
            "eslint",
            "prettier",
            "docker",
            "podman",
        ),
    ),
    (
        "version",
        (
            "kubectl",
            "oc",
            "helm",
            "terraform",
            "tofu",
            "gh",
            "minikube",
            "kind",
            "flux",
            "istioctl",
            "go",
            "cargo",
            "docker",
            "podman",
            "gcloud",
            "az",
            "uv",
            "poetry",
            "pulumi",
            "vault",
            "consul",
            "nomad",
            "packer",
        ),
    ),
    (
        "help",
        (
            "git",
            "go",
            "cargo",
            "npm",
            "pnpm",
            "pip",
            "pip3",
            "uv",
            "kubectl",
            "oc",
            "docker",
            "podman",
            "helm",
            "terraform",
            "tofu",
            "gh",
            "rustup",
            "brew",
            "gcloud",
            "aws",
            "poetry",
            "deno",
        ),
    ),
)
_OWN: dict[str, frozenset[str]] = {
    program: frozenset(flag for flag, programs in _OWN_SPELLINGS if program in programs)
    for _, programs in _OWN_SPELLINGS
    for program in programs
}


def describes_itself(base: str, texts: list[str]) -> bool:
    """Whether `base TEXTS` only prints the program's version or help and exits."""
    if len(texts) != 1:
        return False
    flag = texts[0]
    if base in _STAYS_OPEN:
        return False
    if base in K.SHELLS:  # `bash -h` sets hashall and reads commands from its input
        return flag in ("--version", "--help")
    own = _OWN.get(base)
    if own and flag in own:
        return True
    if flag in _ANY:
        return True
    if flag in _SINGLE_DASH:
        return base in _JVM or base in K.INTERPRETERS or not _known(base)
    return False


def _known(base: str) -> bool:
    """A program whose tables say what it does: its own flags are its judge's business."""
    return (
        base in K.INTERPRETERS
        or base in K.RUNNERS
        or base in K.READ_ONLY
        or base in K.WRITERS
        or base in K.NETWORK
        or base in K.PRIVILEGE
        or base in K.DELETERS
    )


__all__ = ["describes_itself"]
