"""Catastrophic payloads in git aliases, git options that run programs, and in pager and
editor settings.

`git -c alias.x='!CMD' x`, `git config alias.x '!CMD'`, core.pager / core.editor /
core.sshCommand / diff.external / credential.helper / pager.<cmd> / sequence.editor,
`git rebase --exec`, `git bisect run`, `git submodule foreach`, `git filter-branch
--tree-filter`, `--upload-pack`, `git difftool -x`; PAGER / MANPAGER / GIT_PAGER /
EDITOR / VISUAL / GIT_EDITOR / GIT_SSH_COMMAND / LESSOPEN in an assignment, `env` or
`export`; `man -P`. A catastrophic command there is denied; a harmless one still asks
(the setting runs a program), and plain git and man stay allowed.
"""

from __future__ import annotations

_DENY = [
    "git -c alias.x='!rm -rf ~' x",
    "git -c alias.cleanup='!sh -c \"rm -rf /\"' cleanup",
    "git config alias.st '!rm -rf /'",
    "git config --global alias.co '!rm -rf ~'",
    "git config set alias.lg '!rm -rf ~'",
    "git -c core.pager='rm -rf ~' log",
    "git -c core.editor='rm -rf /' commit",
    "git -c core.sshCommand='rm -rf ~' fetch",
    "git -c diff.external='rm -rf ~' diff",
    "git -c credential.helper='!rm -rf ~' push",
    "git -c pager.log='rm -rf ~' log",
    "git -c sequence.editor='rm -rf ~' rebase -i HEAD~2",
    "git config core.pager 'rm -rf ~'",
    "git config --global core.editor 'rm -rf ~'",
    "git config core.fsmonitor 'rm -rf ~'",
    "git rebase --exec 'rm -rf ~' HEAD~3",
    "git rebase -x 'rm -rf /' main",
    "git bisect run rm -rf ~",
    "git submodule foreach 'rm -rf ~'",
    "git filter-branch --tree-filter 'rm -rf /' HEAD",
    "git clone --upload-pack='rm -rf ~' host:repo",
    "git difftool -x 'rm -rf ~' HEAD",
    "PAGER='rm -rf ~' man ls",
    "EDITOR='rm -rf /' git commit",
    "GIT_PAGER='rm -rf ~' git log",
    "GIT_EDITOR='rm -rf ~' git commit",
    "GIT_SSH_COMMAND='rm -rf ~' git fetch",
    "VISUAL='rm -rf ~' crontab -e",
    "MANPAGER='sh -c \"rm -rf ~\"' man ls",
    "LESSOPEN='|rm -rf ~ %s' less notes.txt",
    "export PAGER='rm -rf ~'",
    "export GIT_EDITOR='rm -rf /'; git commit",
    "env EDITOR='rm -rf /' git commit",
    "man -P 'rm -rf ~' ls",
    "man --pager='rm -rf /' ls",
    "git config --replace-all alias.x '!rm -rf ~'",
    "git config -f .git/config alias.x '!rm -rf /'",
    "git -c protocol.ext.allow=always clone 'ext::sh -c rm% -rf% ~' repo",
    "declare -x GIT_PAGER='rm -rf ~'",
    "BROWSER='rm -rf ~' xdg-open index.html",
    "GIT_ASKPASS='rm -rf /' git push",
    "sudo -E EDITOR='rm -rf ~' visudo",
]

_ASK = [
    "git -c alias.x='!echo hi' x",
    "git config alias.st '!git status'",
    "git -c core.pager=less log",
    "git -c core.editor=vim commit",
    "git rebase --exec 'make test' main",
    "git submodule foreach 'git pull'",
    "PAGER=less man ls",
    "EDITOR=vim git commit",
    "GIT_PAGER=cat git log",
    "man -P less ls",
]

_ALLOW = [
    "git log --oneline -5",
    "man ls",
    "git config --get core.pager",
    "git show HEAD:scripts/cleanup.sh",
]

ROWS = (
    [("catastrophic", "deny", c) for c in _DENY]
    + [("opaque", "ask", c) for c in _ASK]
    + [("scary_harmless", "allow", c) for c in _ALLOW]
)
