"""Edits a command makes to its workspace, run by tests/test_sandbox.py twice: contained
(its changes land from the stage) and uncontained in a copy; the two trees must be equal.
Run with the system's Python in the workspace. Every path is relative to it.

Usage: python3 sandbox_edits.py EDIT
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable

EDITS: dict[str, Callable[[], None]] = {}


def edit(function: Callable[[], None]) -> Callable[[], None]:
    EDITS[function.__name__] = function
    return function


def write(path: str, text: str) -> None:
    with open(path, "w") as handle:
        handle.write(text)


@edit
def files() -> None:
    write("new.txt", "new")
    write("keep.txt", "changed")
    with open("append.txt", "a") as handle:
        handle.write(" more")
    os.unlink("gone.txt")
    write("empty-now.txt", "")
    write("name with spaces and ünïcode.txt", "odd name")


@edit
def renames() -> None:
    os.rename("keep.txt", "renamed.txt")
    # a folder of the workspace: rename(2) says EXDEV in the overlay (no redirects without
    # privilege), and mv or shutil.move copy it, then delete it
    shutil.move("tree", "moved-tree")
    os.rename(os.path.join("moved-tree", "a.txt"), "a-out.txt")


@edit
def folders() -> None:
    shutil.rmtree("tree")  # then made again with other content: an opaque folder
    os.makedirs(os.path.join("tree", "fresh"))
    write(os.path.join("tree", "fresh", "f.txt"), "fresh")
    os.makedirs(os.path.join("tree", "b"))  # a name the old folder had: new, empty
    write(os.path.join("tree", "b", "other.txt"), "other")
    os.makedirs(os.path.join("brand", "new", "deep"))
    write(os.path.join("brand", "new", "deep", "leaf.txt"), "leaf")
    os.rmdir("empty-dir")
    shutil.rmtree(os.path.join("tree2", "inner"))


@edit
def replace_kinds() -> None:
    os.unlink("keep.txt")
    os.mkdir("keep.txt")  # a file becomes a folder
    write(os.path.join("keep.txt", "inside.txt"), "was a file")
    shutil.rmtree("tree2")
    write("tree2", "was a folder")  # a folder becomes a file
    os.unlink("link-to-keep")
    os.symlink("append.txt", "link-to-keep")  # a link changes target
    os.symlink("../outside/target", "link-out")  # a link made (to outside: landed as is)


@edit
def metadata() -> None:
    os.chmod("append.txt", 0o600)
    os.chmod("tree", 0o700)
    os.chmod("script.sh", 0o755)
    os.link("append.txt", "hard-of-append.txt")
    write("a-new-one.txt", "x")
    os.link("a-new-one.txt", "hard-of-new.txt")


@edit
def many() -> None:
    for folder in range(20):
        os.makedirs(os.path.join("gen", f"d{folder}"))
        for name in range(25):
            write(os.path.join("gen", f"d{folder}", f"f{name}.txt"), f"{folder}-{name}")
    write("big.bin", "x" * (3 << 20))


def replay(operations: list[list[str]]) -> None:
    """Operations drawn by the property test, each tried in turn (a failure is part of
    the behaviour compared: it must fail the same way both ways)."""
    for op, *args in operations:
        try:
            if op == "write":
                write(args[0], args[1])
            elif op == "append":
                with open(args[0], "a") as handle:
                    handle.write(args[1])
            elif op == "unlink":
                os.unlink(args[0])
            elif op == "mkdir":
                os.makedirs(args[0])
            elif op == "rmtree":
                shutil.rmtree(args[0])
            elif op == "move":
                shutil.move(args[0], args[1])
            elif op == "symlink":
                os.symlink(args[1], args[0])
            elif op == "chmod":
                os.chmod(args[0], int(args[1], 8))
            elif op == "link":
                os.link(args[0], args[1], follow_symlinks=False)
            print(op, *args, "ok")
        except (OSError, shutil.Error) as exc:
            print(op, *args, type(exc).__name__)


if __name__ == "__main__":
    if sys.argv[1] == "replay":
        import json

        replay(json.loads(sys.argv[2]))
    else:
        EDITS[sys.argv[1]]()
