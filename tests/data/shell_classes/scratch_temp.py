"""Scratch space: writing files under the system temp directories (/tmp, /var/tmp,
/dev/shm, macOS's /var/folders) is an ordinary recorded write (notify) and reading there is
free. What stays asked or denied: deleting there (/tmp is shared by every user, and a
delete cannot be undone), changing the temp directory itself (`chmod 700 /tmp`), running
what was put there, and paths that only pass through /tmp on their way elsewhere
(`/tmp/../home/dev/.bashrc`).

Workspace /home/dev/proj, home /home/dev.
"""

from __future__ import annotations

_NOTIFY = r"""
echo x > /tmp/scratch.txt
echo x >> /tmp/log.txt
printf 'a\n' > /var/tmp/notes.txt
cat a.txt b.txt > /dev/shm/joined.txt
mkdir -p /tmp/work
mkdir /tmp/build-123
touch /tmp/x
cp a.txt /tmp/
cp a.txt /tmp/a-copy.txt
cp -r dist /tmp/dist-copy
mv out.log /tmp/
sort data.csv -o /tmp/sorted.csv
tee /tmp/out.txt < input.txt
git diff > /tmp/change.diff
ls -la > /var/tmp/listing.txt
tar czf /tmp/backup.tgz src
zip -r /tmp/src.zip src
chmod +x /tmp/run.sh
cp report.pdf /var/folders/xy/abc123/T/
"""

_ALLOW = r"""
cat /tmp/x
ls /tmp
ls -la /tmp/work
grep -r error /tmp/logs
diff /tmp/a.txt /tmp/b.txt
wc -l /var/tmp/notes.txt
head /dev/shm/joined.txt
"""

_ASK = r"""
rm /tmp/x
rm -rf /tmp/work
rm -rf /tmp
find /tmp -name '*.log' -delete
chmod 700 /tmp
chown dev /tmp
echo x > /tmp/../home/dev/notes.txt
cp /tmp/tool ~/bin/tool
mv /tmp/x ~/notes.txt
bash /tmp/run.sh
/tmp/run.sh
"""

_DENY_OR_ASK = r"""
echo x > /tmp/../home/dev/.bashrc
cp /tmp/tool ~/.local/bin/tool
cp a.txt /tmp/../etc/hosts
"""

ROWS = [
    *[("write", "notify", c) for c in _NOTIFY.strip().splitlines()],
    *[("read_only", "allow", c) for c in _ALLOW.strip().splitlines()],
    *[("destructive", "ask", c) for c in _ASK.strip().splitlines()],
    *[("bypass", "ask+", c) for c in _DENY_OR_ASK.strip().splitlines()],
]
