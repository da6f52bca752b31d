"""Dry runs: they list what a command would do. Allowed only when nothing runs or connects
anyway (`rsync -n` between local directories, `git clean -n`); `make -n`, `npm publish
--dry-run` and `terraform plan` still run project code or reach a remote, so they ask."""

ROWS: list[tuple[str, str, str]] = [
    ("read_only", "allow", "rsync -n -a src/ dst/"),
    ("read_only", "allow", "rsync --dry-run -av a/ /backup/"),
    ("read_only", "allow", "rsync -avn --delete build/ dist/"),
    ("read_only", "allow", "rsync -ani --exclude .git ./ ../mirror/"),
    ("read_only", "allow", "git clean -n"),
    ("read_only", "allow", "git clean -nd"),
    ("read_only", "allow", "git clean --dry-run -x"),
    # look-alikes that write, connect or run code
    ("write", "ask", "rsync -a src/ /backup/"),
    ("destructive", "ask", "rsync -a --delete build/ dist/"),
    ("write", "ask", "rsync -n --log-file=/var/log/x.log -a a/ b/"),
    ("write", "notify", "rsync -n --write-batch=batch -a a/ b/"),
    ("network", "ask", "rsync -n -a src/ host:/srv/app/"),
    ("network", "ask", "rsync --dry-run -a rsync://mirror.example.com/pub/ pub/"),
    ("opaque", "ask", "rsync -n -e 'sh -c evil' a/ b/"),
    ("destructive", "ask", "git clean -fd"),
    ("opaque", "ask", "make -n"),
    ("opaque", "ask", "make --dry-run install"),
    ("opaque", "ask", "npm publish --dry-run"),
    ("opaque", "ask", "npm pack --dry-run"),
    ("network", "ask", "terraform plan"),
    ("network", "ask", "git fetch --dry-run"),
    ("network", "ask", "git push --dry-run origin main"),
]
