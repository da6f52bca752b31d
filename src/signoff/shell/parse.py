"""Walk a tree-sitter-bash parse tree into flat simple-command records.

This module knows bash syntax, not programs: it decodes words the way bash would
(quotes, backslashes, ANSI-C strings, `~`, literal variables assigned earlier, `${IFS}`,
brace lists), tracks `cd` and literal variables in source order, and records for every
simple command where it came from (a pipeline stage, a `$(…)` inside another command's
argument). Anything it cannot resolve is marked dynamic; `shell.py` turns that into opaque.
"""

from __future__ import annotations

import posixpath
import re
from _thread import _local
from collections.abc import Sequence

from ..records import field, record
from .arith import (
    NAME_TAKING_BUILTINS,
    ArithmeticChecks,
    arithmetic_problem,
    expansion_problem,
    name_tests,
    subscript_problem,
    test_problem,
)
from .grammar import binding
from .words import BRACE_SEQ_RE, Cmd, Redir, Walk, Word, decode_ansi_c, expand_braces

TYPE_CHECKING = False  # not typing's: see signoff/__init__.py

if TYPE_CHECKING:
    from tree_sitter import Node, Parser, Tree

# The records live in shell_words; importing them from here keeps working.
__all__ = ["Cmd", "Redir", "Walk", "Walker", "Word", "decode_ansi_c", "expand_braces", "parse"]


_TREE_SITTER = binding("tree_sitter")
_LANGUAGE = _TREE_SITTER.Language(binding("tree_sitter_bash").language())
_LOCAL = _local()  # threading.local without threading: a Parser is not thread-safe, one per thread
MAX_DEPTH = 120  # deeper nesting is reported as a problem (opaque), not recursed into


def parse(source: str) -> tuple[Tree, bytes]:
    """Parse `source`; returns the tree and the UTF-8 bytes its node offsets point into.

    tree-sitter-bash 0.25 can crash the process on some non-ASCII input (found by the
    property tests), so the parser sees an ASCII copy with every non-ASCII byte replaced
    by "x". Bash treats those bytes as ordinary word characters too, and the offsets are
    unchanged, so node text is read back from the original bytes.
    """
    parser: Parser | None = getattr(_LOCAL, "parser", None)
    if parser is None:
        parser = _LOCAL.parser = _TREE_SITTER.Parser(_LANGUAGE)
    raw = source.encode("utf-8", "surrogatepass")
    safe = raw if raw.isascii() else raw.translate(_ASCII_ONLY)
    return parser.parse(safe), raw


_ASCII_ONLY = bytes(b if b < 0x80 else 0x78 for b in range(256))


@record(slots=True)
class _Heredoc:
    """A here-document's body as it is read, with what it expands."""

    text: str = ""
    dynamic: bool = False  # the body expands $vars or $(…) when the command runs
    words: list[Word] = field(default_factory=list)
    redirs: list[Redir] = field(default_factory=list)
    later: list[Node] = field(default_factory=list)


_REDIRECT_TYPES = {"file_redirect", "heredoc_redirect", "herestring_redirect"}
_DYNAMIC_ASSIGNERS = {"read", "mapfile", "readarray", "getopts", "select"}


class Walker(ArithmeticChecks):
    """One pass over one parse tree, in source order (bash runs it in that order)."""

    def __init__(
        self,
        home: str,
        cwd: str | None,
        variables: dict[str, str | None],
        source: bytes,
        depth: int = 0,
        also_in: Sequence[str | None] = (),
    ) -> None:
        self.src = source
        self.home = home
        self.cwd = cwd
        # other directories the shell may be in (where it started, if that is not known
        # for sure; where it stayed, if an earlier `cd` failed)
        self.alt_cwds: list[str | None] = _merged(list(also_in), cwd)
        self.last_cd_alt: list[str | None] | None = None  # alts as they were before a cd
        self.vars = dict(variables)
        self.out = Walk()
        self.depth = depth
        self.function: str | None = None
        self.sub_kind = ""
        # The separators (IFS) to split the current word at: set by an unquoted expansion
        # whose value holds one of them ("" = no splitting).
        self._split = ""

    def _t(self, node: Node | None) -> str:
        if node is None:
            return ""
        return self.src[node.start_byte : node.end_byte].decode("utf-8", "replace")

    # ------------------------------------------------------------------ statements

    def walk(self, node: Node) -> None:
        self.depth += 1
        try:
            if self.depth > MAX_DEPTH:
                self.out.problems.append("nesting too deep to analyze")
                return
            handler = _HANDLERS.get(node.type)
            if handler is not None:
                handler(self, node)
            else:
                for child in node.named_children:
                    self.walk(child)
        finally:
            self.depth -= 1

    def _comment(self, node: Node) -> None:
        return

    def _subshell(self, node: Node) -> None:
        saved = self.cwd, dict(self.vars), list(self.alt_cwds)
        for child in node.named_children:
            self.walk(child)
        self.cwd, self.vars, self.alt_cwds = saved[0], saved[1], saved[2]

    def _list(self, node: Node) -> None:
        """`cd x && cmd`: cmd runs only where cd succeeded. After `;` or `||` a failed cd
        leaves the shell where it was, so later commands are judged in both places."""
        children = node.children
        operator = next((self._t(c) for c in children if not c.is_named), "")
        named = [c for c in children if c.is_named and c.type != "comment"]
        if operator != "&&" or len(named) != 2:
            for child in named:
                self.walk(child)
            self.last_cd_alt = None  # `a || cd x` succeeds without the cd
            return
        before = list(self.alt_cwds)
        self.last_cd_alt = None
        self.walk(named[0])
        if named[0].type not in ("command", "list"):
            self.last_cd_alt = None  # a subshell, a pipeline, an if: its cd proves nothing
        after_left = list(self.alt_cwds)
        if self.last_cd_alt is not None:  # the left side ended with a cd that succeeded
            self.alt_cwds = self.last_cd_alt
        self.walk(named[1])
        # Afterwards: wherever the right side left the shell, or where the left one failed.
        self.alt_cwds = _merged(before + after_left + self.alt_cwds, self.cwd)

    def _pipeline(self, node: Node, first: list[int] | None = None) -> None:
        stages: list[list[int]] = [first] if first is not None else []
        for child in node.named_children:
            if child.type == "comment":
                continue
            start = len(self.out.cmds)
            saved, saved_alts = self.cwd, list(self.alt_cwds)
            self.walk(child)
            self.cwd, self.alt_cwds = saved, saved_alts  # each stage runs in its own subshell
            stages.append(list(range(start, len(self.out.cmds))))
        self.out.pipes.append(stages)

    def _function(self, node: Node) -> None:
        name_node = node.child_by_field_name("name")
        name = self._t(name_node) or "?"
        self.out.functions.add(name)
        outer, self.function = self.function, name
        body = node.child_by_field_name("body")
        if body is not None:
            self.walk(body)
        # `f() { …; } > file`: every call of f writes the file; judge it here, once.
        redirs = [
            self._file_redirect(c)[0] for c in node.named_children if c.type == "file_redirect"
        ]
        if redirs:
            self._add(
                Cmd([], [], redirs, self.cwd, dict(self.vars), self._t(node)), len(self.out.cmds)
            )
        self.function = outer

    def _for(self, node: Node) -> None:
        var = node.child_by_field_name("variable")
        values = [w for child in node.children_by_field_name("value") for w in self.fields(child)]
        body = node.child_by_field_name("body")
        if (
            var is not None
            and body is not None
            and values
            and len(values) <= 8
            and not any(w.dynamic for w in values)
        ):
            # `for f in *.md a.txt`: the body is judged once per value (a glob stays a glob).
            for value in values:
                self.vars[self._t(var)] = value.text
                self.walk(body)
            self.vars[self._t(var)] = None
            return
        if var is not None:
            self.vars[self._t(var)] = None  # loop values: run time
        for child in node.named_children:
            if child is not var:
                self.walk(child)

    def _assignment(self, node: Node) -> None:
        start = len(self.out.cmds)
        name, value = self._assign_pair(node)
        self._set_var(name, value)
        self._add(Cmd([], [(name, value)], [], self.cwd, self.vars, self._t(node)), start)

    def _declaration(self, node: Node) -> None:
        start = len(self.out.cmds)
        words: list[Word] = []
        assigns: list[tuple[str, Word]] = []
        for child in node.children:
            if child.type == "variable_assignment":
                name, value = self._assign_pair(child)
                assigns.append((name, value))
                self._set_var(name, value)
            elif child.type == "variable_name":
                self.vars[self._t(child)] = None
                words.append(Word(self._t(child)))
            elif child.is_named:
                words.extend(self.fields(child))
            else:
                words.append(Word(self._t(child)))
        if any(w.text.startswith("-") and "i" in w.text for w in words):
            # declare -i: every value assigned is evaluated as arithmetic
            self.let([value for _, value in assigns])
        self._problem(subscript_problem("declare", [w.text for w in words[1:]]))
        self._add(Cmd(words, assigns, [], self.cwd, dict(self.vars), self._t(node)), start)

    def _test(self, node: Node) -> None:
        start = len(self.out.cmds)
        for child in node.named_children:
            self.decode(child)  # only for the substitutions inside
        self._problem(test_problem(node, self._t, self._value))
        for operand in name_tests(node, self._t):  # [[ -v name ]]: a subscript is evaluated
            self._problem(subscript_problem("declare", [self.decode(operand).text]))
        self._add(Cmd([Word("[[")], [], [], self.cwd, dict(self.vars), self._t(node)), start)

    def _redirected(self, node: Node) -> None:
        body = node.child_by_field_name("body")
        redirs: list[Redir] = []
        stdin: str | None = None
        dynamic = False
        later: list[Node] = []
        # tree-sitter-bash hangs the words that follow a redirection target on the
        # redirection (`find 2>/dev/null / -delete`): bash gives them to the command.
        extra: list[Word] = []
        start = len(self.out.cmds)
        for child in node.children:
            if child.type == "heredoc_redirect":
                heredoc = self._heredoc(child)
                stdin, dynamic = heredoc.text, heredoc.dynamic
                later.extend(heredoc.later)
                extra.extend(heredoc.words)
                redirs.extend(heredoc.redirs)
            elif child.type == "herestring_redirect":
                for sub in child.named_children:
                    word = self.decode(sub, tilde=True)
                    stdin, dynamic = word.text, word.dynamic
            elif child.type == "file_redirect":
                redir, words = self._file_redirect(child)
                redirs.append(redir)
                extra.extend(words)
        if body is not None and body.type == "command":
            self._command(body, redirs, stdin, start, extra, dynamic)
        elif body is None and extra:
            # `2>/dev/null 2>/dev/null cmp a b`: tree-sitter-bash hangs the whole command,
            # name included, on the redirections; bash runs it with all of them.
            self._finish(node, extra, [], redirs, stdin, dynamic, start)
        else:
            if body is not None:
                self.walk(body)
            if extra:
                self.out.problems.append(
                    "words follow the redirection of a compound command (bash refuses it)"
                )
            if redirs or stdin is not None:
                self._add(
                    Cmd(
                        [],
                        [],
                        redirs,
                        self.cwd,
                        dict(self.vars),
                        self._t(node),
                        stdin_text=stdin,
                        stdin_dynamic=dynamic,
                    ),
                    len(self.out.cmds),
                )
        first = list(range(start, len(self.out.cmds)))
        for extra_node in later:
            if extra_node.type == "pipeline":
                self._pipeline(extra_node, first)
            else:
                self.walk(extra_node)

    def _heredoc(self, node: Node) -> _Heredoc:
        """The heredoc's text, the words and redirections written after its start marker
        on the same line (they belong to the command), and what follows it (`| sh`)."""
        found = _Heredoc()
        for index, child in enumerate(node.children):
            if child.type == "heredoc_body":
                found.text = self._t(child)
                for sub in child.named_children:
                    if sub.type != "heredoc_content":
                        found.dynamic = True
                        self.decode(sub)  # $(…) in an unquoted heredoc runs
            elif node.field_name_for_child(index) == "argument":
                found.words.extend(self.fields(child))
            elif child.type == "file_redirect":
                redir, words = self._file_redirect(child)
                found.redirs.append(redir)
                found.words.extend(words)
            elif child.type == "ERROR":
                self.out.problems.append("a heredoc line could not be parsed")
            elif child.is_named and child.type not in (
                "heredoc_start",
                "heredoc_end",
                "file_descriptor",
            ):
                found.later.append(child)
        return found

    def _file_redirect(self, node: Node) -> tuple[Redir, list[Word]]:
        """The redirection, and the words after its target (arguments of the command)."""
        op = ""
        fd = ""
        target: Word | None = None
        extra: list[Word] = []
        for child in node.children:
            if child.type == "file_descriptor":
                fd = self._t(child)
            elif not child.is_named:
                op = op or self._t(child)
            elif target is None:
                target = self.decode(child, tilde=True)
            else:
                extra.extend(self.fields(child))
        if (
            target is not None
            and op in (">&", "<&", ">&-", "<&-")
            and (target.text.isdigit() or target.text == "-")
        ):
            target = None  # descriptor duplication, not a file
        return Redir(op, fd, target), extra

    def _command(
        self,
        node: Node,
        redirs: list[Redir] | None = None,
        stdin: str | None = None,
        start: int | None = None,
        trailing: list[Word] | None = None,
        dynamic: bool = False,
    ) -> None:
        start = len(self.out.cmds) if start is None else start
        words: list[Word] = []
        assigns: list[tuple[str, Word]] = []
        redirs = list(redirs or [])
        for child in node.named_children:
            kind = child.type
            if kind == "variable_assignment":
                assigns.append(self._assign_pair(child))
            elif kind == "command_name":
                for sub in child.named_children:
                    words.extend(self.fields(sub))
            elif kind in _REDIRECT_TYPES:
                if kind == "file_redirect":
                    redir, extra = self._file_redirect(child)
                    redirs.append(redir)
                    words.extend(extra)
                elif kind == "herestring_redirect":
                    for sub in child.named_children:
                        word = self.decode(sub, tilde=True)  # `<<< ~` is the home directory
                        stdin, dynamic = word.text, word.dynamic
                else:
                    heredoc = self._heredoc(child)
                    stdin, dynamic = heredoc.text, heredoc.dynamic
                    words.extend(heredoc.words)
                    redirs.extend(heredoc.redirs)
                    if heredoc.later:
                        self.out.problems.append("a command follows a heredoc inside a command")
            elif kind != "comment":
                words.extend(self.fields(child))
        words.extend(trailing or ())
        self._finish(node, words, assigns, redirs, stdin, dynamic, start)

    def _finish(
        self,
        node: Node,
        words: list[Word],
        assigns: list[tuple[str, Word]],
        redirs: list[Redir],
        stdin: str | None,
        dynamic: bool,
        start: int,
    ) -> None:
        cmd = Cmd(
            words,
            assigns,
            redirs,
            self.cwd,
            dict(self.vars),
            self._t(node),
            stdin_text=stdin,
            stdin_dynamic=dynamic,
        )
        cmd.calls_function = bool(words) and words[0].text in self.out.functions
        if words and words[0].text == "let":
            self.let(words[1:])
        if words and words[0].text in NAME_TAKING_BUILTINS:
            self._problem(subscript_problem(words[0].text, [w.text for w in words[1:]]))
        self._add(cmd, start)
        self._after_command(words)

    def _add(self, cmd: Cmd, start: int) -> None:
        idx = len(self.out.cmds)
        cmd.function = self.function
        cmd.sub_kind = self.sub_kind
        cmd.alt_cwds = tuple(self.alt_cwds)
        for inner in self.out.cmds[start:]:
            if inner.owner is None and inner.sub_kind and inner.function == self.function:
                inner.owner = idx
        self.out.cmds.append(cmd)

    def _after_command(self, words: list[Word]) -> None:
        """Track what bash itself would change: the directory and read variables."""
        if not words:
            return
        head = words[0].text
        self.last_cd_alt = None
        if head in ("cd", "pushd", "popd"):
            old, before = self.cwd, list(self.alt_cwds)
            moved = self._change_directory(head, words)
            if self.cwd != old:
                # `cd x && cmd`: cmd runs where cd succeeded, from any start (`moved`)
                self.last_cd_alt = _merged([*before, *moved], self.cwd)
                self.alt_cwds = _merged([old, *before, *moved], self.cwd)
        elif head in _DYNAMIC_ASSIGNERS or head == "printf":
            for w in words[1:]:
                if re.fullmatch(r"[A-Za-z_]\w*", w.text):
                    self.vars[w.text] = None

    def _change_directory(self, head: str, words: list[Word]) -> list[str | None]:
        """Move to the directory a cd names; returns where each other directory the shell
        may be in moves to (`cd a; cd b` is in ./b when ./a is missing)."""
        if head in ("cd", "pushd"):
            args = [w for w in words[1:] if not w.text.startswith("-") or w.text == "-"]
            if not args:
                self.cwd = self.home if head == "cd" else None
                return []
            target = args[0]
            if target.dynamic or target.glob or target.text == "-" or self.cwd is None:
                self.cwd = None
                return []
            self.cwd = posixpath.normpath(posixpath.join(self.cwd, target.text))
            if target.text.startswith("/"):
                return []
            return [
                None if alt is None else posixpath.normpath(posixpath.join(alt, target.text))
                for alt in self.alt_cwds
            ]
        self.cwd = None  # popd
        return []

    def _assign_pair(self, node: Node) -> tuple[str, Word]:
        name_node = node.child_by_field_name("name")
        name = self._t(name_node) if name_node is not None else "?"
        if name_node is not None and name_node.type == "subscript":  # a[i]=v: i is arithmetic
            self._problem(expansion_problem(node, "", self._t, self._value))
        value_node = node.child_by_field_name("value")
        if value_node is None:
            return name, Word("")
        if value_node.type == "array":
            for child in value_node.named_children:
                self.decode(child)
            return name, Word(self._t(value_node), dynamic=True)
        return name, self.decode(value_node, tilde=True)

    def _set_var(self, name: str, value: Word) -> None:
        new = None if value.dynamic else value.text
        if name in self.vars and self.vars[name] != new:
            new = None  # assigned twice (maybe conditionally): value unknown
        self.vars[name] = new

    # ------------------------------------------------------------------ words

    def fields(self, node: Node) -> list[Word]:
        """The words one argument node becomes after brace expansion and splitting."""
        word = self.decode(node, tilde=True)
        # `{.git,src}/hooks` parses as a concatenation: bash expands its braces too.
        if node.type in ("word", "concatenation") and "{" in word.text and "," in word.text:
            return [Word(t, word.dynamic, word.glob, word.quoted) for t in expand_braces(word.text)]
        if self._split:
            parts = [p for p in re.split("[" + re.escape(self._split) + "]+", word.text) if p]
            self._split = ""
            return [Word(p, word.dynamic, word.glob, word.quoted) for p in parts] or [word]
        return [word]

    def decode(self, node: Node, tilde: bool = False) -> Word:
        kind = node.type
        raw = self._t(node)
        if kind == "word":
            return self._unquoted(raw, tilde)
        if kind == "raw_string":
            return Word(raw[1:-1], quoted=True)
        if kind == "ansi_c_string":
            return Word(decode_ansi_c(raw[2:-1]), quoted=True)
        if kind in ("string", "translated_string"):
            return self._double_quoted(node)
        if kind == "number":
            return Word(raw)
        if kind == "concatenation":
            parts = [self.decode(c, tilde and i == 0) for i, c in enumerate(node.named_children)]
            text = "".join(p.text for p in parts)
            return Word(
                text,
                any(p.dynamic for p in parts),
                any(p.glob for p in parts) or bool(BRACE_SEQ_RE.search(text)),
                any(p.quoted for p in parts),
            )
        if kind == "simple_expansion":
            return self._lookup(raw[1:], quoted=False)
        if kind == "arithmetic_expansion":
            self._problem(arithmetic_problem(node, self._t, self._value))
        if kind == "expansion":
            self._problem(expansion_problem(node, raw, self._t, self._value))
            names = [c for c in node.named_children]
            if (
                len(names) == 1
                and names[0].type == "variable_name"
                and raw == ("${" + self._t(names[0]) + "}")
            ):
                return self._lookup(self._t(names[0]), quoted=False)
        if kind in ("command_substitution", "process_substitution"):
            self._substitution(node, raw[:2])
            return Word(raw, dynamic=True)
        if kind == "brace_expression" or (kind == "word" and BRACE_SEQ_RE.search(raw)):
            return Word(raw, glob=True)
        for child in node.named_children:  # anything else: resolve only its substitutions
            self.decode(child)
        return Word(raw, dynamic=True)

    def _substitution(self, node: Node, kind: str) -> None:
        saved = self.sub_kind, self.cwd, dict(self.vars)
        self.sub_kind = kind if kind in ("<(", ">(") else "$("
        for child in node.named_children:
            if child.type == "file_redirect":  # `$(< file)`: bash reads the file
                self._add(
                    Cmd(
                        [],
                        [],
                        [self._file_redirect(child)[0]],
                        self.cwd,
                        dict(self.vars),
                        self._t(node),
                    ),
                    len(self.out.cmds),
                )
            else:
                self.walk(child)
        self.sub_kind, self.cwd, self.vars = saved

    def _unquoted(self, raw: str, tilde: bool) -> Word:
        if "\\" not in raw:  # the common case, without the character loop
            return self._tilde(raw, any(c in raw for c in "*?["), tilde)
        out: list[str] = []
        glob = False
        i = 0
        while i < len(raw):
            ch = raw[i]
            if ch == "\\" and i + 1 < len(raw):
                if raw[i + 1] != "\n":
                    out.append(raw[i + 1])
                i += 2
                continue
            if ch in "*?[":
                glob = True
            out.append(ch)
            i += 1
        return self._tilde("".join(out), glob, tilde and raw.startswith("~"))

    def _tilde(self, text: str, glob: bool, tilde: bool) -> Word:
        if tilde and text.startswith("~"):
            head, sep, rest = text.partition("/")
            if head == "~":
                text = self.home + (sep + rest if sep else "")
            else:
                return Word(text, dynamic=True, glob=glob)  # ~user: someone else's home
        return Word(text, glob=glob)

    def _double_quoted(self, node: Node) -> Word:
        out: list[str] = []
        dynamic = False
        for child in node.named_children:
            if child.type == "string_content":
                out.append(
                    re.sub(
                        r"\\([\\$`\"\n])",
                        lambda m: "" if m.group(1) == "\n" else m.group(1),
                        self._t(child),
                    )
                )
            else:
                w = self.decode(child)
                self._split = ""  # quoted: no word splitting
                dynamic = dynamic or w.dynamic
                out.append(w.text)
        return Word("".join(out), dynamic=dynamic, quoted=True)

    def _lookup(self, name: str, quoted: bool) -> Word:
        if name in self.vars:
            value = self.vars[name]
            if value is None:
                return Word("$" + name, dynamic=True)
        elif name == "HOME":
            value = self.home
        elif name == "PWD" and self.cwd is not None:
            value = self.cwd
        elif name == "IFS":
            value = " "
        else:
            return Word("$" + name, dynamic=True)
        ifs = self.vars.get("IFS", " \t\n")
        if ifs is None and not quoted:
            return Word(value, dynamic=True)  # IFS set at run time: the split is unknown
        if not quoted and ifs and any(c in ifs for c in value):
            self._split = ifs  # unquoted: bash splits the value into several words
        return Word(value)


def _merged(alternatives: list[str | None], current: str | None) -> list[str | None]:
    """Distinct other directories, at most four (more: unknown, which asks)."""
    out = list(dict.fromkeys(a for a in alternatives if a != current))
    return out if len(out) <= 4 else [None]


_HANDLERS = {
    "list": Walker._list,
    "comment": Walker._comment,
    "subshell": Walker._subshell,
    "pipeline": Walker._pipeline,
    "function_definition": Walker._function,
    "for_statement": Walker._for,
    "variable_assignment": Walker._assignment,
    "declaration_command": Walker._declaration,
    "unset_command": Walker._declaration,
    "test_command": Walker._test,
    "compound_statement": Walker.compound,
    "c_style_for_statement": Walker.c_for,
    "redirected_statement": Walker._redirected,
    "command": Walker._command,
}
