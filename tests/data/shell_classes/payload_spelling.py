"""Catastrophic commands spelled with `$IFS` separators, and files named like flags that
meet a glob.

`rm$IFS-rf$IFS~`: `$IFS` (a space by default, or what the script set it to) splits one
word into a command. `touch ./-rf; rm *`: the glob expands to `-rf` first, so `rm *`
becomes `rm -rf …` (with `--` before the glob, or `./*`, it does not: those stay the
ordinary destructive ask).
"""

from __future__ import annotations

_DENY = [
    "rm$IFS-rf$IFS~",
    "rm${IFS}-rf${IFS}/",
    "rm$IFS-rf$IFS$HOME",
    "IFS=_ ; x=rm_-rf_/; $x",
    "IFS=_; cmd=rm_-rf_$HOME; $cmd",
    "touch ./-rf; rm *",
    "touch -- -rf; rm *",
    "touch ./-rf && rm -f *",
    ": > ./-rf; rm *",
    "mkdir -- -rf; rm *",
    "touch ./-rf; rm -v *",
    "rm${IFS%?}-rf${IFS%?}/",
    "echo > -rf; rm *",
    "touch ./-delete; find *",
]

_ASK = [
    "touch -- -rf && rm -- *",
    "touch ./-rf; rm ./*",
    "touch ./-rf; rm *.txt",
    "rm -- -rf",
    "IFS=_; x=rm_-f_notes.txt; $x",
]

_ASK_PLUS = [
    # positional parameters are not followed: unknown, so it asks
    "IFS=,; set -- rm,-rf,/; $1",
]

_ALLOW = [
    "ls -- -rf",
    'echo "$IFS" | od -c',
]

ROWS = (
    [("catastrophic", "deny", c) for c in _DENY]
    + [("destructive", "ask", c) for c in _ASK]
    + [("bypass", "ask+", c) for c in _ASK_PLUS]
    + [("scary_harmless", "allow", c) for c in _ALLOW]
)
