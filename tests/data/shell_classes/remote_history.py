"""Destroying what others share or what cannot be rebuilt: force pushes and deletes of a
shared branch on the remote, `--mirror`, every scheduled job, every unused volume. The
look-alikes (a lease-checked force push, a feature branch, listing jobs, pruning without
volumes) keep asking or stay allowed."""

ROWS = [
    ("catastrophic", "deny", "git push --force origin main"),
    ("catastrophic", "deny", "git push -f origin master"),
    ("catastrophic", "deny", "git push origin +main"),
    ("catastrophic", "deny", "git push origin +HEAD:main"),
    ("catastrophic", "deny", "git push --force upstream refs/heads/trunk"),
    ("catastrophic", "deny", "git push origin --delete main"),
    ("catastrophic", "deny", "git push origin :master"),
    ("catastrophic", "deny", "git push --mirror backup"),
    ("catastrophic", "deny", "crontab -r"),
    ("catastrophic", "deny", "crontab -u deploy -r"),
    ("catastrophic", "deny", "crontab -ri"),
    ("catastrophic", "deny", "docker system prune -af --volumes"),
    ("catastrophic", "deny", "docker system prune --volumes"),
    ("catastrophic", "deny", "docker volume prune -a -f"),
    ("destructive", "ask", "git push --force-with-lease origin main"),
    ("destructive", "ask", "git push --force origin feature/login"),
    ("destructive", "ask", "git push -f"),
    ("network", "ask", "git push origin main"),
    ("network", "ask", "git push -u origin main"),
    ("destructive", "ask", "docker system prune -f"),
    ("destructive", "ask", "docker volume prune -f"),
    ("destructive", "ask", "helm uninstall web"),
    ("read_only", "allow", "crontab -l"),
]
