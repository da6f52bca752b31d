"""A here-document ends at the first line that is exactly its delimiter (after leading tabs
for `<<-`): every line after it is a command, even when the writer meant it as data. A line
of data that happens to equal the delimiter ends the document early, and the rest runs.
(This is how a catastrophic test list was once executed for real on a developer's machine.)"""

ROWS = [
    ("catastrophic", "deny", "cat > cases.txt <<'EOF'\nls\nEOF\nrm -rf ~\nEOF\n"),
    ("catastrophic", "deny", "cat > cases.txt <<-EOF\nls\n\tEOF\nrm -rf ~\nEOF\n"),
    ("catastrophic", "deny", "cat <<'A' > f\nx\nA\nA\nrm -rf /*\n"),
    (
        "catastrophic",
        "deny",
        "tee list.txt <<'END' >/dev/null\na\nEND\necho ~ | xargs -I{} rm -rf {}\nEND\n",
    ),
    ("write", "notify", "cat > cases.txt <<'EOF'\nrm -rf ~\nfind / -delete\nEOF\n"),
    ("write", "notify", "cat > notes.md <<-EOF\n\trm -rf ~ is what not to run\n\tEOF\n"),
]
