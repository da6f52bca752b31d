"""Catastrophic payloads visible inside code: interpreter one-liners, awk and sed programs.

Interpreter code is opaque (it always asks); in `auto` mode an ask runs, so a payload
that is plainly visible in the code must be denied. This module reads the code text
with regular expressions, deterministically and only when a program runs inline code:

- shell commands handed to the shell (`os.system`, `subprocess.*`, `execSync`, `system`,
  backticks, `%x(…)`, awk's `system()` and pipes, sed's `e`): every string literal, each
  run of concatenated literals, and the literals of each call read as an argv, are
  judged as shell scripts; a catastrophic one denies;
- the language's own library deleting or overwriting a path (`shutil.rmtree`,
  `fs.rmSync(…, {recursive})`, `FileUtils.rm_rf`, `rmtree`, `open(…, 'w')`, …) with a
  literal target (a string, the home directory, `os.path.join` of those): judged like
  `rm -r` / a redirect to that path;
- kills of every process (pid -1) or of init (pid 1).

What it cannot read (a computed target, a command from input) keeps the opaque ask.
"""

from __future__ import annotations

import posixpath
import re

from ...lazyre import lazy
from ..facts import Context, Facts
from ..parse import Word
from ..paths import note_delete, note_write

# Any of these in the code means it may run shell commands: cheap gate before the rest.
_SHELL_CALL = lazy(
    r"\bos\s*\.\s*(?:system|popen|exec\w*|spawn\w*)\s*\(|\bsubprocess\s*\.\s*\w+\s*\(|"
    r"\b(?:sp|commands|pty)\s*\.\s*\w+\s*\(|"
    r"\b(?:check_call|check_output|getoutput|getstatusoutput|call|run|Popen)\s*\(|"
    r"\b(?:execSync|execFileSync|spawnSync|execFile|spawn|exec|execa|execaSync)\s*\(|"
    r"\b(?:system|shell_exec|passthru|popen|proc_open|pcntl_exec|exec|qx|syscall)\b|"
    r"\b(?:IO\s*\.\s*popen|Open3\s*\.\s*\w+|Kernel\s*\.\s*\w+|Deno\s*\.\s*(?:run|Command)"
    r"|Bun\s*\.\s*(?:spawn\w*|\$))|`|%x[({\[<|!]|\|\s*getline|\|\s*\"|\"\s*\|"
)
# A string literal: double, single or backtick quoted (no newline inside single/double).
_STRING = lazy(r'"((?:[^"\\\n]|\\.)*)"|\'((?:[^\'\\\n]|\\.)*)\'|`([^`]*)`')
_RUBY_X = lazy(r"%x(?:\(([^)]*)\)|\{([^}]*)\}|\[([^\]]*)\]|<([^>]*)>|\|([^|]*)\||!([^!]*)!)")
_PERL_QX = lazy(r"\bqx\s*(?:\(([^)]*)\)|\{([^}]*)\}|\[([^\]]*)\]|/([^/]*)/)")
_ESCAPE = lazy(r"\\(.)", re.DOTALL)
# Between literals of one concatenation or argv list: `+`, `.`, commas, brackets, nothing.
_JOINER = lazy(r"[\s,+\[\]()]*|\s*\.\s*")
_MAX_SCRIPTS = 48

# Library calls that delete or write the path in their first argument.
_DELETE_CALL = lazy(
    r"(?:(?P<rec>\bshutil\s*\.\s*rmtree|\brmtree|\bremove_tree|\bos\s*\.\s*removedirs"
    r"|\bFileUtils\s*\.\s*(?:rm_rf|rm_r|remove_dir|remove_entry(?:_secure)?|rmtree)"
    r"|\b(?:fse|fsExtra|fs)\s*\.\s*(?:removeSync|emptyDirSync|emptyDir)\b|\brimraf(?:\s*\.\s*sync)?"
    r"|\bdel\s*\.\s*sync)"
    r"|(?P<maybe>\b(?:fs|fsp|promises|fs\s*\.\s*promises)\s*\.\s*(?:rmSync|rm|rmdirSync|rmdir|remove)"
    r"|\bDeno\s*\.\s*remove(?:Sync)?|\brequire\s*\(\s*['\"](?:node:)?fs['\"]\s*\)\s*\.\s*"
    r"(?:rmSync|rm|rmdirSync|rmdir))"
    r"|(?P<file>\bos\s*\.\s*(?:remove|unlink)|\bfs\s*\.\s*(?:unlinkSync|unlink)"
    r"|\bFile\s*\.\s*(?:delete|unlink)|\bFileUtils\s*\.\s*(?:rm|rm_f)\b|\bunlink)"
    r"|(?P<write>\bopen|\bfopen|\bfile_put_contents|\bFile\s*\.\s*(?:write|open)|\bIO\s*\.\s*write"
    r"|\bfs\s*\.\s*(?:writeFileSync|writeFile|appendFileSync|appendFile|createWriteStream"
    r"|truncateSync)|\bDeno\s*\.\s*write(?:Text)?File(?:Sync)?|\bos\s*\.\s*truncate"
    r"|\brequire\s*\(\s*['\"](?:node:)?fs['\"]\s*\)\s*\.\s*(?:writeFileSync|appendFileSync))"
    r"|(?P<path>\b(?:pathlib\s*\.\s*)?(?:Pure)?(?:Posix)?Path)"
    r")\b\s*\(?"
)
_PATH_METHOD = lazy(r"\s*\)\s*\.\s*(?P<m>unlink|rmdir|write_text|write_bytes|open)\s*\(")
# Perl's open: `open(F, ">/etc/x")`, `open(my $fh, '>', PATH)`.
_PERL_OPEN = lazy(
    r"\bopen\s*\(?\s*(?:my\s+)?\$?\w+\s*,\s*"
    r"(?:(?P<q>['\"])(?P<mode>\+?[<>]{1,2})(?P=q)\s*,\s*)?"
)
_WRITE_MODE = lazy(r"""['"](?:[wax]|r\+)[bt+]*['"]|['"]>>?['"]|\bO_(?:WRONLY|RDWR|TRUNC)""")

# Kills: pid first (Python, Node, PHP, Deno) or signal first (Perl, Ruby).
_KILL_PID_FIRST = lazy(
    r"\b(?:os\s*\.\s*kill|process\s*\.\s*kill|posix_kill|Deno\s*\.\s*kill)\s*\(\s*"
    r"(?P<pid>-\s*1|1)\s*[,)]"
)
_KILL_SIG_FIRST = lazy(
    r"\b(?:Process\s*\.\s*kill|kill)\s*\(?\s*[-'\"\w:]+\s*(?:,|=>)\s*(?:[^;)\n]*?,\s*)?"
    r"(?P<pid>-\s*1|1)(?![\w.])"
)

# Home directory spellings of the languages; `~` literals count as home too.
_HOME = (
    r"(?:os\s*\.\s*path\s*\.\s*expanduser\s*\(\s*(?P<q>['\"])~(?P<tail>[^'\"]*)(?P=q)\s*\)"
    r"|(?:pathlib\s*\.\s*)?Path\s*\.\s*home\s*\(\s*\)"
    r"|os\s*\.\s*environ\s*\[\s*['\"]HOME['\"]\s*\]"
    r"|os\s*\.\s*(?:environ\s*\.\s*get|getenv)\s*\(\s*['\"]HOME['\"][^)]*\)"
    r"|(?:require\s*\(\s*['\"](?:node:)?os['\"]\s*\)|\bos)\s*\.\s*homedir\s*\(\s*\)"
    r"|process\s*\.\s*env\s*(?:\.\s*HOME\b|\[\s*['\"]HOME['\"]\s*\])"
    r"|Deno\s*\.\s*env\s*\.\s*get\s*\(\s*['\"]HOME['\"]\s*\)|Bun\s*\.\s*env\s*\.\s*HOME\b"
    r"|Dir\s*\.\s*home\b(?:\s*\(\s*\))?|ENV\s*\[\s*['\"]HOME['\"]\s*\]"
    r"|File\s*\.\s*expand_path\s*\(\s*(?P<q2>['\"])~(?P<tail2>[^'\"]*)(?P=q2)\s*\)"
    r"|\$ENV\s*\{\s*['\"]?HOME['\"]?\s*\}|getenv\s*\(\s*['\"]HOME['\"]\s*\)"
    r"|\$_SERVER\s*\[\s*['\"]HOME['\"]\s*\]|ENVIRON\s*\[\s*\"HOME\"\s*\])"
)
_HOME_RE = lazy(_HOME)
_LITERAL = lazy(r"""(?P<q>['"])(?P<s>(?:(?!(?P=q))[^\\\n]|\\.)*)(?P=q)""")
_JOIN_CALL = lazy(
    r"(?:os\s*\.\s*path|path|posixpath|File|require\s*\(\s*['\"](?:node:)?"
    r"path['\"]\s*\))\s*\.\s*(?:join|resolve)\s*\("
)
_WRAP_CALL = lazy(
    r"(?:(?:pathlib\s*\.\s*)?(?:Posix)?Path|os\s*\.\s*fspath|str|String|glob"
    r"|os\s*\.\s*path\s*\.\s*(?:abspath|realpath|normpath))\s*\("
)
_PATH_OP = lazy(r"\s*(?:/|\+|\.(?=\s*['\"]))\s*")


def scan_code(lang: str, code: str, f: Facts, cwd: str | None, ctx: Context) -> None:
    """Deny when interpreter `code` visibly runs, deletes or kills something catastrophic."""
    if not code or len(code) > 200_000:
        return
    _library_calls(lang, code, f, cwd, ctx)
    _kills(lang, code, f)
    if _SHELL_CALL.search(code):
        # `"rm -rf " + os.path.expanduser("~")`: the home directory reads as a literal.
        code = _HOME_RE.sub(
            lambda m: '"' + ctx.home + (m.group("tail") or m.group("tail2") or "") + '"', code
        )
        for text in shell_strings(code):
            if _judge_script(f"the {lang} code", text, f, cwd, ctx):
                break


def scan_shell_texts(who: str, texts: list[str], f: Facts, cwd: str | None, ctx: Context) -> None:
    """Deny when one of `texts` (commands that `who` runs through the shell, e.g. "the
    PAGER setting") is catastrophic."""
    for text in texts[:_MAX_SCRIPTS]:
        if _judge_script(who, text, f, cwd, ctx):
            return


def shell_strings(code: str) -> list[str]:
    """Every text in `code` that may be handed to a shell: each literal, each run of
    concatenated literals, and the literals of each call read as one argv."""
    found: list[str] = []
    literals: list[tuple[int, int, str]] = []
    for m in _STRING.finditer(code):
        body = m.group(1) if m.group(1) is not None else m.group(2)
        if body is None:
            body = m.group(3) or ""
        else:
            body = _ESCAPE.sub(lambda e: {"n": "\n", "t": "\t"}.get(e.group(1), e.group(1)), body)
        literals.append((m.start(), m.end(), body))
    for pattern in (_RUBY_X, _PERL_QX):
        for m in pattern.finditer(code):
            found.append(next(g for g in m.groups() if g is not None))
    found.extend(body for _, _, body in literals if body.strip())
    # Runs of literals joined by `+`, `.`, `,` or nothing: concatenations and argv lists.
    run: list[str] = []
    last_end = -1
    for start, end, body in literals:
        if not (run and _JOINER.fullmatch(code[last_end:start])):
            _add_run(run, found)
            run = []
        run.append(body)
        last_end = end
    _add_run(run, found)
    return list(dict.fromkeys(t for t in found if t.strip()))[:_MAX_SCRIPTS]


def _add_run(run: list[str], found: list[str]) -> None:
    import shlex

    if len(run) > 1:
        found.append(" ".join(shlex.quote(w) for w in run))  # an argv list
        found.append("".join(run))  # a concatenation


# One word that is no program able to harm alone ('w', 'utf-8', 'inherit', '/'): skip the
# parse. Words that are catastrophic alone (`reboot`) still go to the judge.
_ONE_WORD = lazy(r"[\w.@%+=:,/~-]*")
_ALONE_DEADLY = frozenset({"reboot", "halt", "poweroff", "shutdown", "killall5"})


def _judge_script(who: str, text: str, f: Facts, cwd: str | None, ctx: Context) -> bool:
    if len(text) > 4000 or ctx.depth >= 6:
        return False
    if _ONE_WORD.fullmatch(text) and posixpath.basename(text) not in _ALONE_DEADLY:
        return False
    for inner in ctx.script(text, cwd, {}):
        if inner.catastrophic:
            short = " ".join(text.split())
            short = short if len(short) <= 60 else short[:57] + "..."
            f.deny(f"{who} runs `{short}`: {inner.reasons[-1]}")
            return True
    return False


# --------------------------------------------------------------------------- library calls


def _library_calls(lang: str, code: str, f: Facts, cwd: str | None, ctx: Context) -> None:
    for m in _DELETE_CALL.finditer(code):
        kind = m.lastgroup or ""
        name = " ".join(m.group(kind).split())
        start = m.end()
        target, end = path_expr(code, start, ctx.home)
        if target is None:
            continue
        args = _call_span(code, start)
        if kind == "path":
            method = _PATH_METHOD.match(code, end)
            if method is None:
                continue
            kind = "file" if method.group("m") in ("unlink", "rmdir") else "write"
            if method.group("m") == "open" and not _WRITE_MODE.search(
                _call_span(code, method.end())
            ):
                continue
            name = f"{name}(…).{method.group('m')}"
        elif (
            kind == "write"
            and name.endswith("open")
            and not (_WRITE_MODE.search(args) or target.startswith(">"))
        ):
            continue
        recursive = kind == "rec" or (kind == "maybe" and "recursive" in args)
        word = Word(target.lstrip("+<>").strip() or ".")
        probe = Facts([name])
        if kind == "write":
            note_write(probe, word, cwd, ctx)
        else:
            note_delete(probe, word, cwd, ctx, recursive=recursive)
        if probe.catastrophic:
            f.deny(f"the {lang} code {probe.reasons[-1]} with {name}")
            return

    for m in _PERL_OPEN.finditer(code):
        target, _ = path_expr(code, m.end(), ctx.home)
        if target is None or not (target.startswith((">", "+<")) or ">" in (m.group("mode") or "")):
            continue
        probe = Facts(["open"])
        note_write(probe, Word(target.lstrip("+<>").strip() or "."), cwd, ctx)
        if probe.catastrophic:
            f.deny(f"the {lang} code {probe.reasons[-1]} with open")
            return


def path_expr(code: str, pos: int, home: str) -> tuple[str | None, int]:
    """The path a small expression at `pos` names (literals, the home directory, joins and
    `/` or `+` of those), and where it ends; None when it is not literal."""
    value, pos = _primary(code, pos, home)
    if value is None:
        return None, pos
    while True:
        op = _PATH_OP.match(code, pos)
        if op is None or op.end() == pos:
            return value, pos
        nxt, end = _primary(code, op.end(), home)
        if nxt is None:
            return value, pos
        sep = code[op.start() : op.end()].strip()
        value = posixpath.join(value, nxt) if sep == "/" else value + nxt
        pos = end


def _primary(code: str, pos: int, home: str) -> tuple[str | None, int]:
    while pos < len(code) and code[pos] in " \t(":
        pos += 1
    m = _LITERAL.match(code, pos)
    if m:
        text = m.group("s").replace("\\/", "/")
        if text == "~" or text.startswith("~/"):
            text = home + text[1:]
        return text, m.end()
    m = _HOME_RE.match(code, pos)
    if m:
        tail = m.group("tail") or m.group("tail2") or ""
        return home + tail, m.end()
    for call, joining in ((_JOIN_CALL, True), (_WRAP_CALL, False)):
        m = call.match(code, pos)
        if m:
            parts: list[str] = []
            at = m.end()
            while True:
                value, at = path_expr(code, at, home)
                if value is None:
                    return None, at
                parts.append(value)
                rest = re.compile(r"\s*,\s*").match(code, at)
                if not joining or rest is None:
                    break
                at = rest.end()
            close = re.compile(r"\s*\)").match(code, at)
            if close is None and not joining:
                return None, at
            end = close.end() if close else at
            return (posixpath.join(*parts) if joining else parts[0]), end
    return None, pos


def _call_span(code: str, pos: int) -> str:
    """The argument text of the call whose `(` is at or before `pos` (up to its `)`)."""
    depth = 1 if pos > 0 and code[pos - 1] == "(" else 0
    i = pos
    while i < len(code) and i - pos < 2000:
        ch = code[i]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth <= 0:
                break
        elif ch in ";\n" and depth == 0:
            break
        i += 1
    return code[pos:i]


# --------------------------------------------------------------------------- kills


def _kills(lang: str, code: str, f: Facts) -> None:
    if "kill" not in code:
        return
    # Perl's `kill SIGNAL, LIST` and Ruby's `Process.kill(signal, *pids)` name the signal
    # first; Python, Node, PHP and Deno the pid.
    pattern = _KILL_SIG_FIRST if lang.startswith(("perl", "ruby", "irb")) else _KILL_PID_FIRST
    m = pattern.search(code)
    if m:
        pid = m.group("pid").replace(" ", "")
        f.deny(
            f"the {lang} code kills every process (pid -1)"
            if pid == "-1"
            else f"the {lang} code kills init (pid 1), which takes the machine down"
        )


# --------------------------------------------------------------------------- sed

_SED_ADDRESS = r"(?:\d+(?:~\d+)?|\$|/(?:[^/\\\n]|\\.)*/[IM]*)"
# `e COMMAND` (to the end of the line) after an optional address or range and `!`.
_SED_E = lazy(
    r"(?:^|[;\n{}])\s*(?:"
    + _SED_ADDRESS
    + r"(?:\s*,\s*"
    + _SED_ADDRESS
    + r")?\s*!?\s*)?e[ \t]+([^\n]+)"
)
_SED_S = lazy(r"s([^\w\s\\])((?:\\.|(?!\1).)*)\1((?:\\.|(?!\1).)*)\1([a-zA-Z0-9]*)")


def sed_commands(script: str) -> list[str]:
    """Shell commands a sed script runs: `e CMD`, and the replacement of `s///e` (the
    pattern space after the substitution runs; `&` and `\\1` stay as typed)."""
    found = [m.group(1) for m in _SED_E.finditer(script)]
    for m in _SED_S.finditer(script):
        if "e" in m.group(4):
            delim = m.group(1)
            found.append(
                re.sub(
                    r"\\(.)",
                    lambda e: "\n" if e.group(1) == "n" else e.group(1),
                    m.group(3).replace("\\" + delim, delim),
                )
            )
    return [t.strip() for t in found if t.strip()]


__all__ = ["path_expr", "scan_code", "scan_shell_texts", "sed_commands", "shell_strings"]
