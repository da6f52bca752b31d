"""Judging interpreters, package managers and build tools: they run code."""

from __future__ import annotations

from .. import knowledge as K
from ..args import has_flag, option_values, positionals, texts_of
from ..facts import Context, Facts
from ..parse import Cmd, Word

_TEST_MODULES = frozenset({"pytest", "unittest", "nose2", "doctest", "tox", "nox"})


def judge_runner(base: str, args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> None:
    texts = texts_of(args)
    # `--version` and its kin are judged before (shell_help): `-v` is not version everywhere.
    if texts and texts[0] in K.RUNNER_READ_SUBCOMMANDS.get(base, frozenset()):
        f.note(f"{base} {texts[0]} only reports information")
        return
    f.runs_code = True
    code = option_values(args, *K.INLINE_CODE_FLAGS) if base in K.INTERPRETERS else []
    body = " ".join(t.text for t in code) + (cmd.stdin_text or "")
    if K.REVERSE_SHELL_CODE.search(body):
        f.deny("the inline code opens a shell over the network (reverse shell)")
    if K.SQL_CATASTROPHIC.search(body):
        f.deny("drops a whole database")
    if base in K.INTERPRETERS:
        pos = positionals(args, frozenset({"-m", "-W", "-X", "-I", "-r", "--require"}))
        modules = option_values(args, "-m") if not code else []
        if code or (has_flag(args, "-m") and not modules):
            f.opaque(f"{base} runs inline code")
        elif modules:
            module = modules[0].text
            what = "the project's tests" if module in _TEST_MODULES else f"the module {module}"
            f.opaque(f"{base} -m {module} runs {what}")
        elif pos and pos[0].text != "-":
            path = ctx.path(pos[0], cmd.cwd)
            if path:
                f.executes.append(path)
            f.opaque(f"{base} runs the script {pos[0].text}")
        else:
            if cmd.stdin_text is None:
                f.runs_stdin = True
            f.opaque(f"{base} runs code read from its input")
        return
    if base in (
        "npm",
        "pnpm",
        "yarn",
        "pip",
        "pip3",
        "gem",
        "cargo",
        "go",
        "brew",
        "apt",
        "apt-get",
        "uv",
        "poetry",
        "composer",
        "bundle",
    ) and any(
        t in ("install", "add", "i", "ci", "update", "upgrade", "sync", "get") for t in texts[:2]
    ):
        f.network = True
        f.opaque(f"{base} installs packages, which may run their install scripts")
        return
    if base in ("npm", "pnpm", "yarn", "cargo") and texts[:1] == ["publish"]:
        f.network = True
        f.opaque(f"{base} publish uploads a package")
        return
    f.opaque(f"{base} runs project code (build, test or tool scripts)")
