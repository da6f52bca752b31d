"""Writes through a link made earlier in the same command line (issue 12): judged as
writes to the link's target, whatever writes (redirect, tee, cp, sed -i, dd, chmod, touch).
"""

ROWS: list[tuple[str, str, str]] = [
    ("catastrophic", "deny", "ln -s /etc/passwd p && echo x > p"),
    ("catastrophic", "deny", "ln -s /etc/passwd p; echo x >> p"),
    ("catastrophic", "deny", "ln -sf /etc/passwd p && tee p < x.txt"),
    ("catastrophic", "deny", "ln -snf /etc/passwd p && cp x.txt p"),
    ("catastrophic", "deny", "ln -s /etc/passwd p && sed -i s/a/b/ p"),
    ("catastrophic", "deny", "ln -s /etc/passwd p && dd if=x.txt of=p"),
    ("catastrophic", "deny", "ln -s /etc/passwd p && truncate -s 0 p"),
    ("catastrophic", "deny", "ln -s /etc/passwd p && chmod 666 p"),
    ("catastrophic", "deny", "ln -s /etc/passwd p && > p"),
    ("catastrophic", "deny", "ln --symbolic /etc/passwd p && echo x > p"),
    ("catastrophic", "deny", "ln --sym /etc/passwd p && echo x > p"),
    ("catastrophic", "deny", "ln -s -- /etc/passwd p && echo x > p"),
    ("catastrophic", "deny", "ln -s ~/.bashrc b; echo x >> b"),
    ("catastrophic", "deny", "ln -s /home/dev/.ssh/authorized_keys k && cat key.pub >> k"),
    ("catastrophic", "deny", "cp -s /etc/hosts h && echo x > h"),
    ("catastrophic", "deny", "cp --symbolic-link /etc/hosts h && echo x > h"),
    ("catastrophic", "deny", "ln /etc/hosts h && echo x > h"),
    ("catastrophic", "deny", "cp -l /etc/hosts h && echo x > h"),
    # a linked directory
    ("catastrophic", "deny", "ln -s /etc e && echo x > e/passwd"),
    ("catastrophic", "deny", "ln -s /etc e && cp x.txt e/cron.d/job"),
    ("catastrophic", "deny", "ln -sfn /etc e && echo x > e/hosts"),
    ("catastrophic", "deny", "ln -s / r && rm -rf r/"),
    ("catastrophic", "deny", "ln -s / r && rm -rf r/etc"),
    ("catastrophic", "deny", "ln -s /etc e; ln -s x e/foo"),
    ("catastrophic", "deny", "ln -st links /etc/passwd && echo x > links/passwd"),
    ("catastrophic", "deny", "ln -s --target-directory=links /etc/passwd && echo x > links/passwd"),
    # chains, cd, loops, nested shells
    ("catastrophic", "deny", "ln -s /etc a; ln -s a/passwd b; echo x > b"),
    ("catastrophic", "deny", "mkdir d && cd d && ln -s /etc/passwd p && echo x > p"),
    ("catastrophic", "deny", "for i in 1; do ln -s /etc/passwd p; done; echo x > p"),
    ("catastrophic", "deny", "bash -c 'ln -s /etc/passwd p; echo x > p'"),
    ("catastrophic", "deny", "ln -s /etc/passwd p; bash -c 'echo x > p'"),
    ("catastrophic", "deny", "ln -s /etc/passwd \"p\" && echo x > ./p"),
    ("bypass", "ask+", "echo x > p; ln -sf /etc/passwd p"),
    # outside the workspace, not a system file: ask
    ("bypass", "ask", "ln -s /tmp/x p && echo x > p"),
    ("bypass", "ask", "ln -s ../../outside p && echo x > p"),
    ("bypass", "ask", "ln -s /home/dev/other/notes.txt n && echo x >> n"),
    ("bypass", "ask", "ln -s ../other o && cp x.txt o/x.txt"),
    # inside the workspace: still an ordinary edit
    ("write", "notify", "ln -s build/app app && echo x > app"),
    ("write", "notify", "ln -sf src/main.py main.py && echo x >> main.py"),
    ("write", "notify", "ln -s src s && echo x > s/new.py"),
    ("destructive", "ask", "ln -s /etc/passwd p && rm p"),
    ("write", "notify", "ln -s /usr/bin/python3 venv/bin/python"),
    ("write", "notify", "ln -s ../shared/lib lib && ls lib"),
    ("write", "notify", "cp -r a b && echo x > b/c"),
]
