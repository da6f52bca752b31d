"""Catastrophic payloads in awk's and sed's own command languages.

awk runs shell commands through `system(…)`, `print … | "cmd"` and `"cmd" | getline`;
sed through its `e` command (`1e CMD`) and the `e` flag of `s///e` (the pattern space
after the substitution runs as a command). A catastrophic command there is denied; other
commands there ask; awk and sed programs that only print or substitute stay allowed.
"""

from __future__ import annotations

_DENY = [
    """awk 'BEGIN{system("rm -rf /")}'""",
    """awk 'BEGIN { system("rm -rf ~") }'""",
    """gawk 'BEGIN{system("rm -rf " "/")}'""",
    """mawk 'BEGIN{system("kill -9 -1")}'""",
    """nawk 'END{system("rm -rf $HOME")}' /dev/null""",
    """awk '{print "rm -rf ~" | "sh"}' file.txt""",
    """awk 'BEGIN{"rm -rf /" | getline x}'""",
    """awk 'BEGIN{cmd="rm -rf ~"; system(cmd)}'""",
    """echo x | awk '{system("rm -rf /")}'""",
    """sed -n '1e rm -rf ~' f""",
    """sed '1e rm -rf /' file.txt""",
    """sed -e '$e kill -9 -1' f""",
    """sed -n '/foo/e rm -rf ~' f""",
    """sed 's/x/rm -rf \\//e' f""",
    """sed 's/.*/rm -rf ~/e' notes.txt""",
    """sed 's|x|rm -rf /|e' f""",
    """sed -E 's/^(.*)$/rm -rf \\/home\\/dev/e' f""",
    """echo x | sed 's/x/rm -rf ~/e'""",
    """sed --expression='1e rm -rf /' f""",
    """gawk -e 'BEGIN{system("rm -rf /")}'""",
    """awk 'BEGIN{while (("rm -rf ~" | getline line) > 0) print line}'""",
    """sed 'e rm -rf /' notes.txt""",
    """sed '1!e rm -rf ~' notes.txt""",
    """sed -i 's/x/rm -rf ~/e' notes.txt""",
]

_ASK = [
    """awk 'BEGIN{system("ls")}'""",
    """awk 'BEGIN{system("rm -rf build")}'""",
    """sed -n '1e date' f""",
    """sed 's/x/rm -rf build/e' f""",
    """sed 's/x/echo hi/e' f""",
]

_ALLOW = [
    """awk '{print "rm -rf /"}' notes.txt""",
    """awk -F: '{print $1}' notes.txt""",
    """sed 's/rm -rf \\//echo/' notes.txt""",
    """sed 's/e/E/g' notes.txt""",
    """sed -n 's/^rm -rf \\(.*\\)$/\\1/p' notes.txt""",
    """grep -n 'system("rm -rf /")' src/tool.awk""",
    """grep -rn "shutil.rmtree('/')" src""",
]

ROWS = (
    [("catastrophic", "deny", c) for c in _DENY]
    + [("opaque", "ask", c) for c in _ASK]
    + [("scary_harmless", "allow", c) for c in _ALLOW]
)
