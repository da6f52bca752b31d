"""Reads outside the workspace through the shell ask, like a file tool's read does: the
home directory and its dotfiles, sibling checkouts, other repositories (`git -C`), system
logs, other users' files, /etc beyond the machine's identity files, the working directory
after `cd` out of the project. The look-alikes stay allowed: the workspace (also spelled
through `~` or `..`), the short list of harmless system places (/usr, /bin, /lib, identity
files, listings of `/` and `/dev`), the temp directories, package sources under home, and
programs that only compute names or show metadata (`dirname`, `realpath`, `test -e`).

Workspace /home/dev/proj, home /home/dev.
"""

from __future__ import annotations

_ASK = r"""
cat ~/.bashrc
cat ~/.zshrc
head -n 20 ~/.profile
less ~/.vimrc
cat ~/.gitconfig
wc -l ~/.bashrc
ls ~
ls ~/
ls -la ~
ls -la ~/Downloads
ls ~/.config
ls $HOME
du -sh ~
du -sh ~/.cache
tree ~
find ~ -name '*.txt'
grep -r TODO ~
rg password ~/notes
jq . ~/config.json
sort ~/data.csv
wc -l < ~/.bashrc
cat < ~/.profile
cat ../other/README.md
ls ../sibling
ls ..
ls -la ../
cat ../../alice/notes.txt
diff src/a.py ../other/src/a.py
cp ../other/config.yml .
cp ~/notes.txt docs/
grep -r foo ../other
rg foo ../other
find .. -name '*.py'
tail -f ../other/server.log
awk '{print $1}' ../other/access.log
sed -n 1,10p ../other/setup.py
cat /home/dev/proj2/secret-plan.md
cat /home/dev/proj/../proj2/notes.md
git -C ../other log
git -C ../other status
git -C ~/dotfiles diff
git -C /home/dev/other show HEAD
git --work-tree=../other status
cd ../other && git log
cd ~ && git status
cd .. && ls
cd ~ && cat .bashrc
cd ../other; cat README.md
cd ../other && rg foo
cd ~ && grep -r token .
pushd ../other && ls
cat /var/log/syslog
tail /var/log/auth.log
head /var/log/syslog
less /var/log/messages
grep error /var/log/nginx/error.log
zcat /var/log/syslog.2.gz
cat < /var/log/syslog
journalctl -n 50
journalctl -u nginx --since today
cat /etc/passwd
awk -F: '{print $1}' /etc/passwd
cat /etc/group
cat /etc/nginx/nginx.conf
ls /etc
cat /usr/local/etc/redis.conf
ls /usr/local/var/postgres
ls /home
ls /home/alice
cat /home/alice/notes.txt
cat /Users/bob/todo.txt
cat /opt/app/config.yml
ls /srv/www
cat /var/lib/app/state.json
cat /proc/mounts
cat /proc/1/status
ls /mnt/data
ls -R /
find / -name '*.conf'
find / -maxdepth 2 -type d
grep -r password /
file ~/download.bin
tar -C ~ -cf - .
tar czf out.tgz -C ~ docs
zip -r out.zip ~/docs
rsync -a ~/docs/ ./docs/
xargs -a ~/list.txt echo
xxd ~/.bash_history
"""

_ALLOW = r"""
cat README.md
ls
ls -la
ls src
cat ./src/app.py
cat /home/dev/proj/README.md
cat ~/proj/README.md
cat ../proj/README.md
git log
git status
git -C . status
git -C src log
cd src && ls
cd src && cat app.py
cd .. && cd proj && ls
cd ~
cd ..
grep -r TODO .
grep -rn foo src
rg foo
rg foo src
find . -name '*.py'
cat /etc/os-release
cat /etc/lsb-release
cat /etc/debian_version
cat /etc/timezone
cat /proc/cpuinfo
cat /proc/meminfo
cat /proc/version
cat /usr/share/dict/words
ls /usr/bin
ls /usr/local/bin
cat /usr/include/stdio.h
ls /lib/x86_64-linux-gnu
ls -la /
ls /dev
ls /opt
find / -maxdepth 1 -type d
cat /tmp/build.log
ls /tmp
tail -n 50 /tmp/server.log
grep -r error /tmp/logs
ls ~/go/pkg/mod/github.com
cat ~/.cargo/registry/src/index/serde-1.0.0/src/lib.rs
ls ~/.m2/repository
cat /dev/null
cat /dev/fd/0
diff <(sort a.txt) <(sort b.txt)
echo ~
echo ../other
dirname ../other/x
basename ~/notes.txt
realpath ..
readlink -f ../x
stat ~/.bashrc
test -f ~/.bashrc
[ -d ../other ]
dmesg | tail
"""

_NOTIFY = r"""
tar czf out.tgz -C build .
tar czf /tmp/out.tgz src
"""

ROWS = [
    *[("write", "notify", c) for c in _NOTIFY.strip().splitlines()],
    *[("read_only", "ask", c) for c in _ASK.strip().splitlines()],
    *[("read_only", "allow", c) for c in _ALLOW.strip().splitlines()],
]
