"""Commands completed by what feeds them: xargs, parallel, find -exec, crontab, at, sh.

What xargs / parallel receive from a visible producer (an `echo` / `printf` literal in the
stage before, a here-string or here-document, `:::` arguments) completes their argv: the
completed command is judged, and denied when catastrophic. Lines fed to `crontab -` or
`at` are commands that run later; lines fed to a shell or interpreter are its script.
`find` rooted at `/` or a system tree that deletes what it matches deletes across the
system. Look-alikes that complete to a project path or a harmless program keep their
usual verdict.
"""

from __future__ import annotations

_DENY = [
    "echo / | xargs rm -rf",
    "echo ~ | xargs -I{} rm -rf {}",
    "echo / | xargs -n1 rm -rf",
    "printf '%s\\n' / | xargs rm -rf",
    "echo $HOME | xargs rm -r",
    "echo / | sudo xargs rm -rf",
    "echo 'rm -rf ~' | xargs -I{} sh -c '{}'",
    "echo -1 | xargs kill -9",
    "xargs rm -rf <<< /",
    "xargs -I% rm -rf % <<< ~",
    "xargs rm -rf <<'EOF'\n/home/dev\nEOF",
    "parallel rm -rf ::: / ~",
    "parallel 'rm -rf {}' ::: ~",
    "parallel -j2 rm -rf {} ::: /",
    "parallel --will-cite rm -rf ::: /etc",
    "echo / | parallel rm -rf",
    "echo 'rm -rf ~' | parallel",
    "find / -name '*.py' -exec rm {} \\;",
    "find / -name '*.py' -exec rm -f {} +",
    "find / -name '*.log' -delete",
    "find /etc -name '*.conf' -delete",
    "find /usr -type f -exec rm -f {} +",
    "find ~ -name '*.py' -exec rm {} +",
    "find ~ -type f -exec rm {} +",
    "echo '* * * * * rm -rf ~' | crontab -",
    "printf '* * * * * kill -9 -1\\n' | crontab -",
    "(crontab -l; echo '0 * * * * rm -rf ~') | crontab -",
    "crontab - <<'EOF'\n@reboot rm -rf /\nEOF",
    "echo '@hourly rm -rf $HOME' | crontab",
    "echo 'rm -rf ~' | at now + 1 minute",
    "at now <<< 'rm -rf /'",
    "echo 'rm -rf /' | sh",
    "echo 'rm -rf ~' | bash",
    "printf 'rm -rf ~\\n' | sh",
    "echo 'rm -rf ~' | sudo sh",
    "printf '/\\n' | xargs -L1 rm -rf",
    "printf '%s\\0' / | xargs -0 rm -rf",
    "echo / | xargs -r sudo rm -rf",
    "echo / | xargs -P4 -n1 rm -rf",
    "parallel -X rm -rf ::: ~",
    "echo 'rm -rf ~' | batch",
    "crontab -u dev - <<< '* * * * * rm -rf ~'",
    "printf 'rm -rf /\\n' | bash -s",
]

_ASK = [
    "echo build | xargs rm -rf",
    "echo foo.txt | xargs rm",
    "echo build dist | xargs -n1 rm -rf",
    "parallel rm -rf ::: build dist",
    "parallel gzip ::: a.log b.log",
    "echo '0 3 * * * make backup' | crontab -",
    "crontab - <<'EOF'\n0 3 * * * /usr/bin/backup\nEOF",
    "echo 'make test' | at now",
    "find /tmp -name '*.log' -delete",
    "find . -name '*.pyc' -exec rm {} +",
    "echo 'ls -la' | sh",
    "echo 12345 | xargs kill",
    "echo '~' | xargs rm -rf",
]

_ALLOW = [
    "echo / | xargs ls",
    "echo src | xargs ls -la",
    "crontab -l",
    "echo 'rm -rf ~' | cat",
    "echo 'rm -rf /' > /dev/null",
]

ROWS = (
    [("catastrophic", "deny", c) for c in _DENY]
    + [("destructive", "ask", c) for c in _ASK]
    + [("scary_harmless", "allow", c) for c in _ALLOW]
)
