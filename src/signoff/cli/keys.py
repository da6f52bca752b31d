"""CLI: `signoff keys` (show, rotate, reanchor): the keys kept outside the store.

Nothing here ever prints key material: only where the keys come from and their ids.
"""

from __future__ import annotations

import argparse
import os
from contextlib import closing
from typing import Any

from ..keys import Keys, key_file_path, load_keys, rotate
from ._output import JSON_HELP, add_store_options, command, print_json, store_for


def _where(keys: Keys) -> str:
    return "$SIGNOFF_KEY" if os.environ.get("SIGNOFF_KEY") else str(key_file_path())


def _summary(keys: Keys) -> dict[str, Any]:
    return {
        "source": _where(keys),
        "current": keys.current,
        "ids": sorted(keys.masters),
        "legacy_ids": sorted(keys.legacy),
    }


def cmd_keys_show(args: argparse.Namespace) -> int:

    keys = load_keys()
    if args.json:
        print_json(_summary(keys))
        return 0
    print(f"Keys: {_where(keys)}")
    print(f"Current key id: {keys.current}")
    older = sorted(set(keys.masters) - {keys.current})
    print(f"Older key ids (still verify): {', '.join(older) or 'none'}")
    if keys.legacy:
        print(f"Moved out of older stores: {', '.join(sorted(keys.legacy))}")
    return 0


def cmd_keys_rotate(args: argparse.Namespace) -> int:

    keys = rotate()
    if args.json:
        print_json(_summary(keys))
        return 0
    print(f"New current key id: {keys.current} ({_where(keys)}).")
    print(
        "New requests, decisions and audit entries use it; what the older ids made still "
        "verifies. Web sessions signed with the old key must log in again."
    )
    return 0


def cmd_keys_reanchor(args: argparse.Namespace) -> int:

    with closing(store_for(args, existing=True)) as store:
        reset = getattr(store, "reset_anchor", None)
        tip = reset() if reset is not None else None
    if tip is None:
        print("Nothing to anchor (an empty log, or a store kept in memory).")
        return 0
    print(f"Anchored the audit chain at entry {tip.seq}, hash {tip.hash}.")
    return 0


def register(sub: Any) -> None:
    keys = command(
        sub,
        "keys",
        help="the keys kept outside the store: show their ids, rotate them",
        description="The keys that sign requests, decisions and audit entries are kept "
        "outside the store ($SIGNOFF_KEY or a file in your config directory). Show where "
        "they are and their ids (never the keys), rotate them, or re-anchor a store.",
        examples=("signoff keys show", "signoff keys rotate"),
    )
    keys.set_defaults(func=cmd_keys_show, json=False)
    actions = keys.add_subparsers(dest="keys_command", metavar="ACTION")
    show = command(
        actions,
        "show",
        help="where the keys are and their ids (never the keys)",
        description="Show where the keys come from and their ids; never the keys.",
        examples=("signoff keys show --json",),
    )
    show.add_argument("--json", action="store_true", help=JSON_HELP)
    show.set_defaults(func=cmd_keys_show)
    rot = command(
        actions,
        "rotate",
        help="make a new current key; older ids still verify",
        description="Make a new current key: what is signed from now on uses it, and what "
        "older keys signed still verifies.",
        examples=("signoff keys rotate",),
    )
    rot.add_argument("--json", action="store_true", help=JSON_HELP)
    rot.set_defaults(func=cmd_keys_rotate)
    anchor = command(
        actions,
        "reanchor",
        help="anchor this store's audit head anew, after you replaced the store "
        "on purpose (verify said it is not the anchored one)",
        description="Anchor this store's audit chain head anew. Only after you replaced "
        "the store on purpose (a restored backup): signoff audit verify then said it is not "
        "the store it anchored.",
        examples=("signoff keys reanchor --workspace ~/src/app",),
    )
    add_store_options(anchor)
    anchor.set_defaults(func=cmd_keys_reanchor)
