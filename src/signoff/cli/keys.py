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

    from ..deciders import os_user

    with closing(store_for(args, existing=True)):
        pass  # a store that does not exist is refused before a key file is made for it
    load_keys()  # on purpose: a key file that was lost is made anew here, and only here
    with closing(store_for(args, existing=True)) as store:
        reanchor = getattr(store, "reanchor", None)
        if reanchor is None:
            print("Nothing to anchor: a store kept in memory.")
            return 0
        done = reanchor(os_user())
    if args.json:
        print_json(
            {
                "seq": done.seq,
                "gaps": [list(g) for g in done.gaps],
                "lost_keys": list(done.lost_keys),
                "unnumbered": [done.first_gap, done.seq - 1] if done.first_gap < done.seq else None,
            }
        )
        return 0
    print(f"Recorded the reanchor as audit entry {done.seq}, and anchored the chain there.")
    for kid in done.lost_keys:
        print(
            f"Accepted: entries keyed with key id {kid}, which no key source holds now; "
            "they can no longer be told from forgeries, and are pinned as they are."
        )
    lost = [*done.gaps]
    if done.first_gap < done.seq:
        lost.append((done.first_gap, done.seq - 1))
    for first, last in lost:
        print(f"Accepted: entries {first}..{last} are lost (a gap in the numbering).")
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
        help="accept on purpose a lost key, lost entries or a replaced store, on the record",
        description="Only after `signoff audit verify` named one of these, and you know why: "
        "the key file was lost (its entries can no longer be checked: a new key signs from "
        "here on), entries were lost from the end of the log (a power cut, a restored "
        "backup), or you replaced the store on purpose. Writes a keys.reanchored entry "
        "that names what it accepts and pins the chain before it, then anchors the chain "
        "there. A log changed in the database is never accepted.",
        examples=("signoff keys reanchor --workspace ~/src/app",),
    )
    anchor.add_argument("--json", action="store_true", help=JSON_HELP)
    add_store_options(anchor)
    anchor.set_defaults(func=cmd_keys_reanchor)
