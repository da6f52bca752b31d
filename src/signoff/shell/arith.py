"""Where bash evaluates data as code: arithmetic, array subscripts, `${v@P}`, `${!x}`.

Bash's arithmetic evaluates a variable's *value* as an expression, and a subscript inside
that value is expanded: with `x='a[$(rm -rf ~)]'`, `echo $((x))`, `(( x ))`,
`[[ $x -eq 1 ]]`, `let x` and `${arr[x]}` all run the command. Prompt expansion
(`${v@P}`) and indirect expansion (`${!x}`) do the same with the value of `v` or `x`.
So each variable such a context reads must have a value known from the command line
itself that carries nothing that could run; otherwise the context is a problem (ask).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator

from ..lazyre import lazy

TYPE_CHECKING = False  # not typing's: see signoff/__init__.py

if TYPE_CHECKING:
    from tree_sitter import Node

    from .parse import Walk, Word

# Set by bash itself to numbers (or unset): their values cannot carry code.
_SHELL_NUMBERS = frozenset(
    {
        "RANDOM",
        "SRANDOM",
        "LINENO",
        "SECONDS",
        "BASHPID",
        "PPID",
        "UID",
        "EUID",
        "OPTIND",
        "SHLVL",
        "COLUMNS",
        "LINES",
        "HISTCMD",
        "EPOCHSECONDS",
    }
)
_IDENT = lazy(r"[A-Za-z_]\w*")
_CODE_IN_VALUE = lazy(r"[\[$`]")
_ARITH_TEST_OPS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})
# `name[...$(...)...]` given to a builtin that takes a variable name: the subscript runs.
_SUBSCRIPT_CODE = lazy(r"[A-Za-z_]\w*\[[^\]]*[$`]")
_ASSIGN_TARGET = lazy(r"[A-Za-z_]\w*\s*=(?!=)")
NAME_TAKING_BUILTINS = frozenset(
    {
        "test",
        "[",
        "printf",
        "read",
        "declare",
        "typeset",
        "local",
        "export",
        "readonly",
        "unset",
        "mapfile",
        "readarray",
        "wait",
        "getopts",
        "let",
    }
)
# Builtins that take a name only right after one of these flags (else: every argument).
_NAME_AFTER_FLAG = {
    "printf": frozenset({"-v"}),
    "test": frozenset({"-v", "-R"}),
    "[": frozenset({"-v", "-R"}),
    "wait": frozenset({"-p"}),
}
_LISTING_INDIRECT = lazy(r"\$\{![A-Za-z_]\w*(?:[*@]|\[[*@]\])\}\Z")

Lookup = Callable[[str], "str | bool | None"]  # value; None: run time; False: not set here


def value_may_run(name: str, lookup: Lookup) -> bool:
    """Whether evaluating `name` as arithmetic could run something."""
    if name.isdigit() or name in _SHELL_NUMBERS:
        return False
    value = lookup(name)
    if value is False or value is None:
        return True  # from the environment or known only at run time
    assert isinstance(value, str)
    return bool(_CODE_IN_VALUE.search(value))


def subscript_problem(head: str, words: list[str]) -> str | None:
    """A variable name with a subscript holding an expansion, given to a builtin that takes
    names (`unset 'a[$(cmd)]'`, `printf -v 'a[$(cmd)]'`, `[[ -v 'a[$(cmd)]' ]]`)."""
    if head in _NAME_AFTER_FLAG:
        flags = _NAME_AFTER_FLAG[head]
        words = [w for before, w in itertools.pairwise(words) if before in flags]
    for word in words:
        if _SUBSCRIPT_CODE.match(word):
            return f"the subscript of {word!r} is evaluated, and it holds an expansion"
    return None


def expression_names(expression: str) -> list[str]:
    """Names an arithmetic expression reads (a plain `name=` target is only written)."""
    return _IDENT.findall(_ASSIGN_TARGET.sub(" ", expression))


def _names(node: Node, text: Callable[[Node], str]) -> Iterator[str]:
    kind = node.type
    if kind == "variable_name":
        yield text(node)
    elif kind == "word":
        yield from expression_names(text(node))
    elif kind in ("simple_expansion", "expansion"):
        for child in node.named_children:
            if child.type == "variable_name":
                yield text(child)
            elif child.type == "subscript":
                yield from _names(child, text)
    elif kind in (
        "command_substitution",
        "process_substitution",
        "string_content",
        "raw_string",
        "number",
        "comment",
    ):
        return
    else:
        for child in node.named_children:
            yield from _names(child, text)


def arithmetic_problem(node: Node, text: Callable[[Node], str], lookup: Lookup) -> str | None:
    """The problem with evaluating `node` as arithmetic, or None when no value can run."""
    for name in _names(node, text):
        if value_may_run(name, lookup):
            return (
                f"arithmetic evaluates ${name}, whose value could run a command "
                "(a subscript in it is expanded)"
            )
    return None


def test_problem(node: Node, text: Callable[[Node], str], lookup: Lookup) -> str | None:
    """`[[ a -eq b ]]` evaluates both sides as arithmetic; `-v` expands a subscript."""
    for expr in _walk(node, "binary_expression", "unary_expression"):
        ops = [text(c) for c in expr.children if c.type == "test_operator"]
        if any(op in _ARITH_TEST_OPS for op in ops):
            for side in expr.named_children:
                if side.type != "test_operator":
                    problem = arithmetic_problem(side, text, lookup)
                    if problem:
                        return problem
    return None


def expansion_problem(
    node: Node, raw: str, text: Callable[[Node], str], lookup: Lookup
) -> str | None:
    """`${v@P}`, `${!x}` and `${arr[i]}` read a value as code."""
    name = next((text(c) for c in node.named_children if c.type == "variable_name"), "")
    if raw.startswith("${!") and not _LISTING_INDIRECT.match(raw):
        value = lookup(name)
        if not (isinstance(value, str) and _IDENT.fullmatch(value)):
            return f"${{!{name}}} expands a variable named by a value, which could run code"
    if raw.endswith("@P}") and (not name or value_may_run(name, lookup)):
        return f"prompt expansion of ${name} runs command substitutions in its value"
    for child in node.named_children:
        if child.type == "subscript":
            index = child.child_by_field_name("index")
            if index is not None and index.type != "number" and text(index) not in ("@", "*"):
                problem = arithmetic_problem(index, text, lookup)
                if problem:
                    return problem
    return None


def _walk(node: Node, *kinds: str) -> Iterator[Node]:
    if node.type in kinds:
        yield node
    for child in node.named_children:
        yield from _walk(child, *kinds)


def name_tests(node: Node, text: Callable[[Node], str]) -> list[Node]:
    """The operands of `-v` / `-R` in a `[[ ]]` test: variable names, maybe subscripted."""
    found: list[Node] = []
    for child in node.named_children:
        ops = [text(c) for c in child.children if c.type == "test_operator"]
        if child.type == "unary_expression" and {"-v", "-R"} & set(ops):
            found.extend(c for c in child.named_children if c.type != "test_operator")
        else:
            found.extend(name_tests(child, text))
    return found


class ArithmeticChecks:
    """The walker's side of the checks above: it knows the variables set so far."""

    vars: dict[str, str | None]
    home: str
    out: Walk

    def _t(self, node: Node | None) -> str:
        raise NotImplementedError

    def walk(self, node: Node) -> None:
        raise NotImplementedError

    def _value(self, name: str) -> str | bool | None:
        """A variable's value as set on this command line; None: run time; False: not set."""
        if name in self.vars:
            return self.vars[name]
        return self.home if name == "HOME" else False

    def _problem(self, problem: str | None) -> None:
        if problem:
            self.out.problems.append(problem)

    def compound(self, node: Node) -> None:
        if self._t(node).startswith("(("):  # (( expr )): arithmetic
            self._problem(arithmetic_problem(node, self._t, self._value))
        for child in node.named_children:
            self.walk(child)

    def c_for(self, node: Node) -> None:
        for part in node.children_by_field_name("initializer"):
            value = part.child_by_field_name("value")
            name = part.child_by_field_name("name")
            if part.type == "variable_assignment" and value is not None and name is not None:
                self._problem(arithmetic_problem(value, self._t, self._value))
                if value.type == "number":
                    self.vars[self._t(name)] = self._t(value)  # counts up from a number
            else:
                self._problem(arithmetic_problem(part, self._t, self._value))
        for field_name in ("condition", "update"):
            for part in node.children_by_field_name(field_name):
                self._problem(arithmetic_problem(part, self._t, self._value))
        body = node.child_by_field_name("body")
        if body is not None:
            self.walk(body)

    def let(self, expressions: list[Word]) -> None:
        for word in expressions:
            if word.dynamic:
                self.out.problems.append(
                    f"arithmetic evaluates a value known only at run time ({word.text})"
                )
                return
            for name in expression_names(word.text):
                if value_may_run(name, self._value):
                    self.out.problems.append(
                        f"arithmetic evaluates ${name}, whose value could run a command "
                        "(a subscript in it is expanded)"
                    )
                    return
