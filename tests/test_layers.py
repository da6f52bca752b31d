"""The package's import graph is acyclic and its layers point one way: the web and the CLI
on top, the vocabulary (models, exceptions) at the bottom. Read from the source with `ast`,
counting imports inside functions too (a cycle hidden in a function is still a cycle);
imports under `if TYPE_CHECKING:` are types only and are not counted."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parent.parent / "src" / "signoff"

# Bottom to top. A module may import from its own layer and the layers below, never above.
LAYERS: list[set[str]] = [
    {
        "records",
        "_records",
        "hints",
        "digests",
        "escape",
        "plainpath",
    },  # the tools the vocabulary is written with
    {
        "exceptions",
        "models",
        "kinds",
        "times",
        "i18n",
        "_moved",
        "lazyre",
        "lazylog",
        "waits",
        "outage",
    },
    {"normalize", "run_state", "tools", "tool_schema", "project_rules"},
    {
        "keys",
        "rule_values",
        "rule_checks",
        "rules",
        "settings",
        "protected",
        "runs_later",
        "safe_files",
        "targets",
        "effects",
        "walks",
        "always",
        "policy",
        "shell",
        "reviewer_settings",
        "reviewer_input",
        "reviewer_remit",
        "reviewer_tripwire",
        "stringpaths",
        "shell_judgement",
    },
    {
        "channels",
        "gate",
        "sandbox",
        "store",
        "workspace",
        "llm",
        "accounts",
        "deciders",
        "review",
        "reviewer",
    },
    {"runs", "approvals", "audit", "testing", "board"},
    {"present", "notify"},
    {"adapters", "mcp"},
    {"web", "cli", "demo", "agent", "registry", "runner", "stats", "fake_openai", "__main__"},
]


def _name(path: Path) -> str:
    parts = list(path.relative_to(PKG.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_only(tree: ast.AST) -> set[int]:
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip.update(id(x) for stmt in node.body for x in ast.walk(stmt))
    return skip


def import_graph() -> dict[str, set[str]]:
    paths = {_name(p): p for p in PKG.rglob("*.py")}
    graph: dict[str, set[str]] = {m: set() for m in paths}
    for module, path in paths.items():
        tree = ast.parse(path.read_text())
        skip = _type_only(tree)
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = module.split(".")
                    if path.name != "__init__.py":
                        base = base[:-1]
                    base = base[: len(base) - node.level + 1]
                    target = ".".join([*base, *([node.module] if node.module else [])])
                else:
                    target = node.module or ""
                subs = [f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in paths]
                found = subs if len(subs) == len(node.names) else [target, *subs]
            elif isinstance(node, ast.Import):
                found = [a.name for a in node.names]
            else:
                continue
            graph[module].update(f for f in found if f in paths and f != module)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def layer_of(module: str) -> int:
    """The layer of `signoff.X...`: by X, where every shell_* module belongs to `shell`."""
    if module == "signoff":
        return len(LAYERS) - 1
    top = module.split(".")[1]
    key = "shell" if top.startswith("shell") else top
    for rank, layer in enumerate(LAYERS):
        if key in layer:
            return rank
    raise AssertionError(f"{module} is in no layer: add it to LAYERS in tests/test_layers.py")


GRAPH = import_graph()


def test_the_graph_is_read() -> None:
    assert "signoff.store" in GRAPH["signoff.runs.runner"]
    assert "signoff.models" in GRAPH["signoff.gate"]


def test_no_import_cycles() -> None:
    assert _cycles(GRAPH) == []


def test_cycle_finder_finds_one() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


@pytest.mark.parametrize("module", sorted(m for m in GRAPH if m != "signoff"))
def test_layers_point_down(module: str) -> None:
    upward = [
        dep
        for dep in sorted(GRAPH[module])
        if dep != "signoff" and layer_of(dep) > layer_of(module)
    ]
    assert upward == [], f"{module} (layer {layer_of(module)}) imports from above: {upward}"
