"""Formatters and linters: they rewrite only the files they are given, or only read them.

`black src/`, `ruff format`, `gofmt -w main.go`, `cargo fmt` rewrite the named files (or
the project) with the same code, laid out again: a reversible write inside the workspace,
so notify. Their check modes (`ruff check .`, `black --check`, `mypy src`) only read: allow.
The paths they are given are judged like any write or read, so a formatter pointed at
`/etc`, the home directory or `.git/hooks` still asks or is denied.

A tool stays an ordinary runner (ask: "runs project code") when it would load code that
the agent can write: a JavaScript configuration of eslint or prettier, a plugin named in
their data configuration or in mypy's, a cargo alias, a custom rustup toolchain. Those
configuration files are read here (through the context's bounded reader) from the working
directory up to the workspace root, and recorded as content the verdict depends on, so a
command that writes one of them and then runs the tool (`echo … > eslint.config.js;
eslint .`) asks (`shell_content.judge_races`). Linters whose configuration can always name
code from the workspace (pylint's init-hook, flake8's local-plugins) are not listed here.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass

from ...lazyre import LazyPattern, lazy
from ..args import has_flag, option_values, positionals, texts_of
from ..facts import Context, Facts
from ..parse import Cmd, Word
from ..paths import note_read, note_write


@dataclass(frozen=True, slots=True)
class Tool:
    """How one formatter or linter says whether it writes, and which options take values."""

    writes_by_default: bool  # black, isort, rustfmt, ruff format: no flag needed to write
    write_flags: frozenset[str] = frozenset()  # gofmt -w, prettier --write, eslint --fix
    check_flags: frozenset[str] = frozenset()  # black --check: only reports
    value_opts: frozenset[str] = frozenset()
    output_opts: frozenset[str] = frozenset()  # options naming a file the tool writes
    refuse: frozenset[str] = frozenset()  # options that load or run code: stay a runner


_RUFF_VALUES = frozenset(
    {
        "--config",
        "--select",
        "--ignore",
        "--extend-select",
        "--extend-ignore",
        "--line-length",
        "--target-version",
        "--exclude",
        "--extend-exclude",
        "--output-format",
        "--stdin-filename",
        "--per-file-ignores",
        "--extend-per-file-ignores",
        "--fixable",
        "--unfixable",
        "--extend-fixable",
        "--dummy-variable-rgx",
        "--range",
        "--cache-dir",
        "-o",
        "--output-file",
    }
)
TOOLS: dict[str, Tool] = {
    "black": Tool(
        True,
        check_flags=frozenset({"--check", "--diff", "-c", "--code"}),
        value_opts=frozenset(
            {
                "-l",
                "--line-length",
                "-t",
                "--target-version",
                "--include",
                "--exclude",
                "--extend-exclude",
                "--force-exclude",
                "--config",
                "--stdin-filename",
                "-W",
                "--workers",
                "--required-version",
                "--python-cell-magics",
                "-c",
                "--code",
            }
        ),
    ),
    "isort": Tool(
        True,
        check_flags=frozenset(
            {"--check-only", "--check", "-c", "--diff", "--show-files", "--show-config"}
        ),
        value_opts=frozenset(
            {
                "--settings-path",
                "--sp",
                "--settings-file",
                "--settings",
                "-p",
                "--project",
                "--profile",
                "-l",
                "--line-length",
                "--skip",
                "-s",
                "--src",
                "--filename",
                "-m",
                "--multi-line",
            }
        ),
    ),
    "gofmt": Tool(
        False,
        write_flags=frozenset({"-w"}),
        value_opts=frozenset({"-r", "-cpuprofile"}),
        refuse=frozenset({"-cpuprofile"}),
    ),
    "goimports": Tool(
        False, write_flags=frozenset({"-w"}), value_opts=frozenset({"-local", "-srcdir"})
    ),
    "rustfmt": Tool(
        True,
        check_flags=frozenset({"--check", "--print-config"}),
        value_opts=frozenset(
            {"--config-path", "--edition", "--config", "--emit", "--color", "--style-edition"}
        ),
    ),
    "clang-format": Tool(
        False,
        write_flags=frozenset({"-i"}),
        value_opts=frozenset(
            {
                "--files",
                "-lines",
                "--lines",
                "-offset",
                "-length",
                "-assume-filename",
                "--assume-filename",
                "-cursor",
            }
        ),
    ),
    "shfmt": Tool(
        False,
        write_flags=frozenset({"-w", "--write"}),
        value_opts=frozenset({"-i", "--indent", "-ln", "--language-dialect", "--filename"}),
    ),
    "prettier": Tool(
        False,
        write_flags=frozenset({"--write", "-w"}),
        value_opts=frozenset(
            {
                "--config",
                "--ignore-path",
                "--stdin-filepath",
                "--parser",
                "--log-level",
                "--print-width",
                "--tab-width",
                "--trailing-comma",
                "--end-of-line",
                "--cache-strategy",
                "--cache-location",
                "--plugin",
            }
        ),
        output_opts=frozenset({"--cache-location"}),
        refuse=frozenset({"--plugin", "--config", "--config-precedence"}),
    ),
    "eslint": Tool(
        False,
        write_flags=frozenset({"--fix", "--fix-type"}),
        value_opts=frozenset(
            {
                "-c",
                "--config",
                "--ext",
                "--ignore-path",
                "--ignore-pattern",
                "--rule",
                "--env",
                "--global",
                "--max-warnings",
                "-f",
                "--format",
                "-o",
                "--output-file",
                "--cache-location",
                "--parser",
                "--plugin",
                "--rulesdir",
                "--fix-type",
                "--resolve-plugins-relative-to",
                "--stdin-filename",
                "--parser-options",
            }
        ),
        output_opts=frozenset({"-o", "--output-file", "--cache-location"}),
        refuse=frozenset(
            {
                "-c",
                "--config",
                "--plugin",
                "--rulesdir",
                "--parser",
                "--resolve-plugins-relative-to",
                "-f",
                "--format",
                "--flag",
                "--inspect-config",
            }
        ),
    ),
    "mypy": Tool(
        False,
        value_opts=frozenset(
            {
                "--config-file",
                "--cache-dir",
                "-p",
                "--package",
                "-m",
                "--module",
                "-c",
                "--command",
                "--python-version",
                "--exclude",
                "--junit-xml",
                "--html-report",
                "--txt-report",
                "--xml-report",
                "--linecount-report",
                "--any-exprs-report",
                "--cobertura-xml-report",
                "--lineprecision-report",
                "--linecoverage-report",
                "--shadow-file",
                "--python-executable",
                "--always-true",
                "--always-false",
                "--platform",
            }
        ),
        output_opts=frozenset(
            {
                "--cache-dir",
                "--junit-xml",
                "--html-report",
                "--txt-report",
                "--xml-report",
                "--linecount-report",
                "--any-exprs-report",
                "--cobertura-xml-report",
                "--lineprecision-report",
                "--linecoverage-report",
            }
        ),
        refuse=frozenset(
            {"--config-file", "--python-executable", "--install-types", "--shadow-file"}
        ),
    ),
}
_CARGO_FMT = Tool(
    True,
    check_flags=frozenset({"--check"}),
    value_opts=frozenset({"-p", "--package", "--message-format", "--manifest-path"}),
)
_TERRAFORM_FMT = Tool(True, check_flags=frozenset({"-check", "-write=false"}))
# `ruff SUBCOMMAND`: which ones read and which write (with or without a flag).
# `--config` takes a file or inline settings (`--config "output-file='…'"`): not judged here.
_RUFF_REFUSE = frozenset({"--config"})
_RUFF_READ = frozenset({"rule", "linter", "config", "version", "help"})
_RUFF_FIX = frozenset({"--fix", "--unsafe-fixes", "--add-noqa", "--fix-only"})
_RUFF_NO_FIX = frozenset({"--no-fix", "--diff", "--show-fixes"})


# every program `judge_tool` may judge (the others return False at once)
TOOL_PROGRAMS = frozenset({*TOOLS, "cargo", "terraform", "tofu", "ruff"})


def judge_tool(base: str, args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> bool:
    """Judge a formatter or linter; False leaves it to the runner judgement (asks)."""
    if base == "cargo":
        if not args or args[0].text != "fmt":
            return False
        return _judge(base, "cargo fmt", _CARGO_FMT, args[1:], f, cmd, ctx)
    if base in ("terraform", "tofu"):  # `terraform fmt` only; plan and validate run providers
        if not args or args[0].text != "fmt":
            return False
        return _judge(base, f"{base} fmt", _TERRAFORM_FMT, args[1:], f, cmd, ctx)
    if base == "ruff":
        return _judge_ruff(args, f, cmd, ctx)
    tool = TOOLS.get(base)
    return tool is not None and _judge(base, base, tool, args, f, cmd, ctx)


def _judge_ruff(args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> bool:
    texts = texts_of(args)
    known = _RUFF_READ | {"check", "format"}
    named = bool(texts) and (texts[0] in known or texts[0].isalpha())
    sub = texts[0] if named else "check"  # `ruff .` is the old spelling of `ruff check .`
    rest = args[1:] if named else args
    if sub in _RUFF_READ:
        f.note(f"ruff {sub} only reports information")
        return True
    if sub == "check":
        writes = any(t in _RUFF_FIX for t in texts) and not any(t in _RUFF_NO_FIX for t in texts)
        tool = Tool(
            False,
            write_flags=frozenset({"--fix"} if writes else ()),
            value_opts=_RUFF_VALUES,
            output_opts=frozenset({"-o", "--output-file", "--cache-dir"}),
            refuse=_RUFF_REFUSE,
        )
        return _judge("ruff", "ruff check", tool, rest, f, cmd, ctx, forced_write=writes)
    if sub == "format":
        tool = Tool(
            True,
            check_flags=frozenset({"--check", "--diff"}),
            value_opts=_RUFF_VALUES,
            output_opts=frozenset({"--cache-dir"}),
            refuse=_RUFF_REFUSE,
        )
        return _judge("ruff", "ruff format", tool, rest, f, cmd, ctx)
    return False  # ruff server, ruff clean, ruff analyze …: the runner judgement


def _judge(
    base: str,
    name: str,
    tool: Tool,
    args: list[Word],
    f: Facts,
    cmd: Cmd,
    ctx: Context,
    *,
    forced_write: bool = False,
) -> bool:
    texts = texts_of(args)
    if any(t.partition("=")[0] in tool.refuse for t in texts):
        return False
    if any(w.dynamic or (w.glob and not w.quoted) for w in args if w.text.startswith("-")):
        return False  # an option only known at run time could be one that loads code
    why = loads_code(base, cmd, ctx, f)
    if why:
        f.runs_code = True
        f.opaque(why)
        return True
    checking = (has_flag(args, *tool.check_flags) if tool.check_flags else False) or (
        base == "cargo" and "--check" in texts
    )  # `cargo fmt -- --check`
    writes = forced_write or (
        has_flag(args, *tool.write_flags)
        if tool.write_flags
        else tool.writes_by_default and not checking
    )
    paths = [w for w in positionals(args, tool.value_opts) if w.text != "-"]
    if base == "cargo":
        paths = option_values(args, "--manifest-path")
        paths = [Word(posixpath.dirname(w.text) or ".", w.dynamic) for w in paths]
    for w in option_values(args, *tool.output_opts):
        f.raise_to("reversible_write", f"{name} writes its report or cache to {w.text}")
        note_write(f, w, cmd.cwd, ctx)
    if writes:
        f.raise_to("reversible_write", f"{name} rewrites the files it is given in place")
        for w in paths or [Word(".")]:
            note_write(f, w, cmd.cwd, ctx, content=False)
            path = ctx.path(w, cmd.cwd)
            if path is not None:
                f.reformats.append(path)
    else:
        f.note(f"{name} only reads and reports")
        for w in paths:
            note_read(f, w, cmd.cwd, ctx)
    return True


# --------------------------------------------------------------------------- configuration

# JavaScript configurations: code, whatever they contain.
_JS = ("js", "mjs", "cjs", "ts", "mts", "cts")
_CODE_CONFIGS: dict[str, tuple[str, ...]] = {
    "eslint": (*(f"eslint.config.{e}" for e in _JS), ".eslintrc.js", ".eslintrc.cjs"),
    "prettier": (*(f"prettier.config.{e}" for e in _JS), *(f".prettierrc.{e}" for e in _JS)),
}
# Data configurations that can still name code to load (a plugin, a parser, a local file).
_DATA_CONFIGS: dict[str, tuple[str, ...]] = {
    "eslint": (".eslintrc", ".eslintrc.json", ".eslintrc.yaml", ".eslintrc.yml"),
    "prettier": (
        ".prettierrc",
        ".prettierrc.json",
        ".prettierrc.json5",
        ".prettierrc.yaml",
        ".prettierrc.yml",
        ".prettierrc.toml",
    ),
    "mypy": ("mypy.ini", ".mypy.ini", "pyproject.toml", "setup.cfg"),
    "ruff": ("ruff.toml", ".ruff.toml", "pyproject.toml"),
    "cargo": (".cargo/config.toml", ".cargo/config", "rust-toolchain.toml", "rust-toolchain"),
    "rustfmt": ("rust-toolchain.toml", "rust-toolchain"),
}
_PACKAGE_KEY = {"eslint": "eslintConfig", "prettier": "prettier"}
# What makes a data configuration load code: plugins and parsers (packages the agent can
# write under node_modules, or local paths), shared configs other than eslint's own, mypy
# plugins (the config's directory is put first on sys.path), a cargo alias (`fmt = "run"`),
# a rustup toolchain at a path.
_LOADS: dict[str, LazyPattern] = {
    "eslint": lazy(
        r"plugin|parser|processor|[\"']\.{0,2}/|extends[\"']?\s*:\s*\[?\s*"
        r"[\"'](?!eslint:)",
        re.IGNORECASE,
    ),
    "prettier": lazy(r"plugin|[\"']\.{0,2}/", re.IGNORECASE),
    # mypy runs `python_executable` to find packages; reports and caches go where it says
    "mypy": lazy(
        r"^\s*(plugins|python_executable|install_types|cache_dir|junit_xml"
        r"|\w+_report)\s*=",
        re.MULTILINE,
    ),
    # ruff writes its report and cache where its settings say (`output-file = "~/.bashrc"`)
    "ruff": lazy(r"^\s*(output-file|cache-dir)\s*=", re.MULTILINE),
    # cargo: aliases (`fmt = "run"`), and the programs it runs for target information
    # (build.rustc, rustc-wrapper, target runners and linkers); rustup: a toolchain path
    "cargo": lazy(
        r"^\s*\[\s*(alias|build|target|env|host|unstable)\b"
        r"|^\s*(alias|build|target|env|host)\s*\.|^\s*path\s*=",
        re.MULTILINE,
    ),
    "rustfmt": lazy(r"^\s*path\s*=", re.MULTILINE),
}


def loads_code(base: str, cmd: Cmd, ctx: Context, f: Facts) -> str:
    """Why running `base` here would load code from its configuration, or ""."""
    key = "cargo" if base == "cargo" else base
    code = _CODE_CONFIGS.get(key, ())
    data = _DATA_CONFIGS.get(key, ())
    if not code and not data:
        return ""
    if cmd.cwd is None:  # `cd "$X" && eslint .`: whose configuration is unknown
        return (
            f"{base} runs in a directory only known at run time, whose configuration may load code"
        )
    for folder in _folders(cmd.cwd, ctx):
        for name in code:
            path = posixpath.join(folder, name)
            f.content_from.append(path)
            if ctx.reader(path) is not None:
                return f"{base} runs its JavaScript configuration ({path}): code from the project"
        for name in data:
            path = posixpath.join(folder, name)
            f.content_from.append(path)
            if _mentions(ctx.reader, path, _LOADS[key]):
                return f"{base} follows settings in {path} that load code or say where to write"
        if key in _PACKAGE_KEY:
            path = posixpath.join(folder, "package.json")
            f.content_from.append(path)
            if _package_config(ctx.reader(path), _PACKAGE_KEY[key], _LOADS[key]):
                return f"{base} loads plugins or code named in {path}"
    return ""


def _folders(cwd: str | None, ctx: Context) -> list[str]:
    """The working directory and its parents up to the workspace root (only the working
    directory itself outside the workspace)."""
    if cwd is None:
        return []
    here = ctx.resolve(cwd)
    out = [here]
    while ctx.inside(here) and here != ctx.workspace:
        here = posixpath.dirname(here)
        out.append(here)
    return out


def _mentions(reader: Callable[[str], bytes | None], path: str, pattern: LazyPattern) -> bool:
    content = reader(path)
    return content is not None and bool(pattern.search(content.decode("utf-8", "replace")))


def _package_config(content: bytes | None, key: str, pattern: LazyPattern) -> bool:
    """package.json's `prettier` / `eslintConfig` entry: a shared config by name (a module
    to load) or settings that name plugins."""
    if content is None or f'"{key}"'.encode() not in content:
        return False
    try:
        entry = json.loads(content).get(key)
    except (ValueError, AttributeError):
        return True  # unreadable: it may say anything
    return isinstance(entry, str) or bool(pattern.search(json.dumps(entry)))
