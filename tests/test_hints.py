"""`signoff.hints`: the Literal types type checkers read and the values code uses at run
time are written twice (so that a hook imports no typing); here they are held equal."""

from __future__ import annotations

import ast
import importlib
import inspect
import typing
from pathlib import Path

import pytest

import signoff
from signoff import hints

SRC = Path(signoff.__file__).parent


def _literals_read_by_type_checkers() -> dict[str, dict[str, tuple[str, ...]]]:
    """`Name = Literal[...]` inside each module's `if TYPE_CHECKING:` block, by module."""
    found: dict[str, dict[str, tuple[str, ...]]] = {}
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text("utf-8"))
        for node in tree.body:
            if not (isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"):
                continue
            for stmt in node.body:
                if (
                    isinstance(stmt, ast.Assign)
                    and isinstance(stmt.value, ast.Subscript)
                    and ast.unparse(stmt.value.value) == "Literal"
                ):
                    values = ast.literal_eval(stmt.value.slice)
                    name = stmt.targets[0].id  # type: ignore[attr-defined]
                    module = ".".join(path.relative_to(SRC.parent).with_suffix("").parts)
                    found.setdefault(module, {})[name] = (
                        values if isinstance(values, tuple) else (values,)
                    )
    return found


LITERALS = _literals_read_by_type_checkers()


def test_the_modules_that_keep_literal_types_for_run_time_are_found() -> None:
    assert {"signoff.models", "signoff.settings", "signoff.adapters.core"} <= set(LITERALS)
    assert LITERALS["signoff.settings"]["Mode"] == ("default", "accept-edits", "plan", "auto")


@pytest.mark.parametrize("module", sorted(LITERALS))
def test_run_time_values_are_the_literal_types(module: str) -> None:
    """Each module's `_LITERALS` holds every Literal its type checkers see, with the same
    values in the same order; the type made on first use is typing's own."""
    loaded = importlib.import_module(module)
    runtime = vars(loaded).get("_LITERALS", {})
    assert runtime == LITERALS[module]
    for name, values in LITERALS[module].items():
        made = getattr(loaded, name)
        assert typing.get_origin(made) is typing.Literal
        assert typing.get_args(made) == values
        assert getattr(loaded, name) is made  # kept once made


def test_an_unknown_name_is_still_an_attribute_error() -> None:
    from signoff import models

    with pytest.raises(AttributeError, match=r"'signoff\.models' has no attribute 'Tierr'"):
        models.Tierr  # type: ignore[attr-defined]  # noqa: B018
    with pytest.raises(ImportError):
        from signoff.models import Nope  # type: ignore[attr-defined]  # noqa: F401


def test_a_literal_type_imports_as_before() -> None:
    from signoff.models import Tier
    from signoff.shell import ShellClass
    from signoff.store import InDoubtOutcome, Store

    assert "unknown" in typing.get_args(Tier)
    assert typing.get_args(ShellClass)[0] == "read_only"
    assert typing.get_args(InDoubtOutcome) == ("done", "failed", "retry")
    assert inspect.isclass(Store)


def test_cast_and_overload_do_nothing_at_run_time() -> None:
    marker = object()
    assert hints.cast(int, marker) is marker

    def fn() -> int:
        return 1

    assert hints.overload(fn) is fn


def _runtime_uses_of_type_checking_names(path: Path) -> list[str]:
    """Names bound only under `if TYPE_CHECKING:` that code reads at run time (outside
    annotations, which are strings): each would be a NameError mypy cannot see."""
    tree = ast.parse(path.read_text("utf-8"))
    checking: set[str] = set()
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for stmt in node.body:
                inside.update(id(sub) for sub in ast.walk(stmt))
                if isinstance(stmt, ast.Import | ast.ImportFrom):
                    checking.update((a.asname or a.name).split(".")[0] for a in stmt.names)
                elif isinstance(stmt, ast.Assign):
                    checking.update(t.id for t in stmt.targets if isinstance(t, ast.Name))
    bound: set[str] = set()
    annotations: set[int] = set()
    for node in ast.walk(tree):
        if id(node) in inside:
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            bound.add(node.id)
        found = []
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            args = node.args
            every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
            found = [a.annotation for a in every if a is not None and a.annotation is not None]
            found += [node.returns] if node.returns else []
        elif isinstance(node, ast.AnnAssign):
            found = [node.annotation]
        for annotation in found:
            annotations.update(id(sub) for sub in ast.walk(annotation))
    return [
        f"{path.relative_to(SRC.parent)}:{node.lineno} {node.id}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Name)
        and isinstance(node.ctx, ast.Load)
        and node.id in checking - bound
        and id(node) not in annotations | inside
    ]


def test_names_imported_for_type_checkers_are_not_used_at_run_time() -> None:
    used = [
        use
        for path in sorted(SRC.rglob("*.py"))
        for use in _runtime_uses_of_type_checking_names(path)
    ]
    assert used == []
