"""What the policy forbids reading in a workspace, found before a contained run so the
sandbox hides it: a deny (or ask) rule on reading a path holds for the code a contained
command runs as it holds for the agent's own tools. Found by walking the workspace once
(`.git`'s objects are not walked; a folder the policy hides is hidden whole)."""

from __future__ import annotations

import os

from ..exceptions import SandboxUnavailable

MAX_ENTRIES = 500_000  # a workspace larger than this is not walked: the run is refused


def denied_paths(workspace: str, *, limit: int = MAX_ENTRIES) -> list[str]:
    """Every file or folder of the workspace that the policy would not let a tool read:
    signoff's own state, what a read rule denies or asks for, secrets (`Policy.hidden`)."""
    from ..policy import Policy
    from ..settings import load_settings

    root = os.path.realpath(workspace)
    policy = Policy(load_settings(root), workspace=root)
    found: list[str] = []
    seen = 0
    for folder, dirs, files in os.walk(root):
        seen += len(dirs) + len(files)
        if seen > limit:
            raise SandboxUnavailable(
                f"the workspace {root} holds more than {limit} entries: too many to check "
                "for what the policy hides"
            )
        for name in list(dirs):
            path = os.path.join(folder, name)
            if name == ".git" or policy.hidden(path):
                dirs.remove(name)  # hidden whole, or git's own store (never a rule's target)
                if name != ".git":
                    found.append(path)
        found.extend(p for p in (os.path.join(folder, n) for n in files) if policy.hidden(p))
    return found


__all__ = ["MAX_ENTRIES", "denied_paths"]
