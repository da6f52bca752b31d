"""The analysis resolves paths a component at a time through its own cache; on a real tree
of links (relative, absolute, chained, dangling, looping, links to links' parents) it must
give exactly what `os.path.realpath` gives for every path."""

from __future__ import annotations

import os
import posixpath
import random
from pathlib import Path

from signoff.shell.facts import Context


def _tree(root: Path, seed: int) -> list[str]:
    rng = random.Random(seed)
    dirs = [root]
    for i in range(12):
        d = rng.choice(dirs) / f"d{i}"
        d.mkdir()
        dirs.append(d)
        (d / "f").write_text("x")
    names: list[str] = [str(d) for d in dirs]
    for i in range(14):
        where = rng.choice(dirs) / f"l{i}"
        target = rng.choice(
            [
                str(rng.choice(dirs)),  # absolute
                os.path.relpath(rng.choice(dirs), where.parent),  # relative
                "../" * rng.randint(0, 3) + f"d{rng.randint(0, 11)}",  # maybe dangling
                f"l{rng.randint(0, 13)}",  # a chain, maybe a loop
                "/nonexistent/x",
            ]
        )
        where.symlink_to(target)
        names.append(str(where))
    paths = []
    for _ in range(300):
        base = rng.choice(names)
        tail = "/".join(
            rng.choice(["f", "d3", "l2", "x", "l5", "d0"]) for _ in range(rng.randint(0, 3))
        )
        paths.append(posixpath.join(base, tail) if tail else base)
    return paths


def test_component_resolution_is_realpath(tmp_path: Path) -> None:
    for seed in range(6):
        root = tmp_path / f"t{seed}"
        root.mkdir()
        for path in _tree(root, seed):
            ctx = Context(str(root), str(root), os.path.realpath, lambda *a: [])
            expected = posixpath.normpath(os.path.realpath(posixpath.normpath(path)))
            assert ctx.resolve(path) == expected, path
            assert ctx.resolve(path) == expected, path  # and from the cache


def test_a_shared_context_gives_each_path_its_own_answer(tmp_path: Path) -> None:
    paths = _tree(tmp_path, 42)
    ctx = Context(str(tmp_path), str(tmp_path), os.path.realpath, lambda *a: [])
    for path in paths:
        assert ctx.resolve(path) == posixpath.normpath(os.path.realpath(posixpath.normpath(path)))
