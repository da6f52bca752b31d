"""Database clients asked only to look, and the option parser the local queries share.

`psql -l`, `psql -c 'SELECT …'`, `mysql -e 'SHOW DATABASES'`, `sqlite3 app.db .tables`
are allowed when they talk to a server on this machine (or read a database file inside the
workspace) and every statement passes the read-only SQL judgement (`shell_sql`). SQL that
may write asks with that reason; SQL that drops a database is denied; an unknown option,
a remote host or statements read from the input fall back to the network judgement.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from ...lazyre import lazy
from .. import knowledge as K
from ..facts import Context, Facts
from ..parse import Cmd, Word
from ..paths import note_read
from .sql import read_only_sql

LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1", "[::1]", "0.0.0.0", ""})

# --------------------------------------------------------------------------- options


Parsed = tuple[dict[str, list[str]], list[Word]]


def parse_options(
    args: list[Word],
    values: frozenset[str],
    flags: frozenset[str],
    attached: frozenset[str] = frozenset(),
) -> Parsed | None:
    """Options and positionals, or None when an option is not one of the known ones (it
    might write a file or run a program). `attached`: short options whose value may only
    be attached (`mysql -pSECRET`)."""
    opts: dict[str, list[str]] = {}
    pos: list[Word] = []
    i = 0
    while i < len(args):
        w = args[i]
        t = w.text
        i += 1
        if w.quoted or not t.startswith("-") or t == "-":
            pos.append(w)
            continue
        if w.dynamic:
            return None
        name, eq, value = t.partition("=")
        if t.startswith("--") or name in flags or name in values:  # sqlite3 -header
            if name in flags and not eq:
                opts.setdefault(name, []).append("")
            elif name in values:
                if not eq:
                    if i >= len(args) or args[i].dynamic:
                        return None
                    value = args[i].text
                    i += 1
                opts.setdefault(name, []).append(value)
            else:
                return None
            continue
        for k, letter in enumerate(t[1:]):  # a cluster of short options: -tAc
            short = "-" + letter
            rest = t[2 + k :]
            if short in attached:
                opts.setdefault(short, []).append(rest)
                break
            if short in values:
                if not rest:
                    if i >= len(args) or args[i].dynamic:
                        return None
                    rest = args[i].text
                    i += 1
                opts.setdefault(short, []).append(rest)
                break
            if short not in flags:
                return None
            opts.setdefault(short, []).append("")
    return opts, pos


def local_host(host: str) -> bool:
    return host.lower() in LOCAL_HOSTS or host.startswith("/")


def _conninfo_local(text: str) -> bool:
    """A database name, URI or `key=value` connection string that stays on this machine."""
    if "://" in text:
        try:
            parts = urlsplit(text)
        except ValueError:
            return False
        return local_host(parts.hostname or "") and "host=" not in parts.query
    hosts = re.findall(r"\b(?:host|hostaddr)\s*=\s*'?([^\s']*)", text)
    return all(local_host(h) for h in hosts)


# --------------------------------------------------------------------------- databases

_PSQL_VALUES = frozenset(
    {
        "-U",
        "--username",
        "-d",
        "--dbname",
        "-p",
        "--port",
        "-h",
        "--host",
        "-P",
        "--pset",
        "-F",
        "--field-separator",
        "-R",
        "--record-separator",
        "-v",
        "--set",
        "--variable",
        "-c",
        "--command",
    }
)
_PSQL_FLAGS = frozenset(
    {
        "-l",
        "--list",
        "-t",
        "--tuples-only",
        "-A",
        "--no-align",
        "-x",
        "--expanded",
        "-q",
        "--quiet",
        "-X",
        "--no-psqlrc",
        "-w",
        "--no-password",
        "-W",
        "--password",
        "--csv",
        "-H",
        "--html",
        "-E",
        "--echo-hidden",
        "-e",
        "--echo-queries",
        "-a",
        "--echo-all",
        "-b",
        "--echo-errors",
        "-n",
        "--no-readline",
        "-z",
        "-0",
    }
)
_MYSQL_VALUES = frozenset(
    {
        "-u",
        "--user",
        "-h",
        "--host",
        "-P",
        "--port",
        "-D",
        "--database",
        "-S",
        "--socket",
        "-e",
        "--execute",
        "--password",
        "--protocol",
    }
)
_MYSQL_FLAGS = frozenset(
    {
        "-N",
        "--skip-column-names",
        "-B",
        "--batch",
        "-t",
        "--table",
        "-s",
        "--silent",
        "-E",
        "--vertical",
        "-r",
        "--raw",
        "-p",
        "--no-defaults",
    }
)
_SQLITE_VALUES = frozenset(
    {"-separator", "--separator", "-nullvalue", "--nullvalue", "-newline", "--newline"}
)
_SQLITE_FLAGS = frozenset(
    {
        "-readonly",
        "--readonly",
        "-header",
        "--header",
        "-noheader",
        "--noheader",
        "-column",
        "--column",
        "-csv",
        "--csv",
        "-json",
        "--json",
        "-line",
        "--line",
        "-list",
        "--list",
        "-box",
        "--box",
        "-table",
        "--table",
        "-markdown",
        "--markdown",
        "-html",
        "--html",
        "-quote",
        "--quote",
        "-tabs",
        "--tabs",
        "-batch",
        "--batch",
        "-bail",
        "--bail",
        "-echo",
        "--echo",
    }
)
# sqlite3 dot-commands that only show the schema or set how results are printed.
_SQLITE_DOT = lazy(
    r"^\s*\.(tables|schema|fullschema|indexes|indices|databases|dbinfo"
    r"|show|help|headers|header|mode|width|nullvalue|separator|stats"
    r"|timer|changes|eqp|lint|dbconfig)\b[\w\s.%*'\"-]*$"
)
_PSQL_META = lazy(
    r"^\s*\\(d[a-zA-Z]{0,3}[+S]{0,2}|l\+?|list\+?|conninfo|encoding)"
    r"(\s+[\w.*\"$-]+)?\s*$"
)


def _psql(base: str, args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> bool:
    parsed = parse_options(args, _PSQL_VALUES, _PSQL_FLAGS)
    if parsed is None or cmd.stdin_text is not None:
        return False
    opts, pos = parsed
    hosts = opts.get("-h", []) + opts.get("--host", [])
    names = [*opts.get("-d", []), *opts.get("--dbname", []), *(w.text for w in pos)]
    if (
        any(w.dynamic for w in pos)
        or not all(local_host(h) for h in hosts)
        or not all(_conninfo_local(n) for n in names)
    ):
        return False
    sql = opts.get("-c", []) + opts.get("--command", [])
    listing = "-l" in opts or "--list" in opts
    if not (sql or listing):
        return False
    if not all(_PSQL_META.match(s) or read_only_sql(s) for s in sql):
        return _changes_data(base, f, sql)
    f.network = True
    f.note(
        "psql lists databases or runs read-only queries on a local server"
        if sql
        else "psql -l lists the databases of a local server"
    )
    return True


def _changes_data(base: str, f: Facts, sql: list[str]) -> bool:
    f.network = True
    f.raise_to("network", f"{base} runs SQL that may change or delete data")
    if any(K.SQL_CATASTROPHIC.search(s) for s in sql):
        f.deny("drops a whole database")
    return True


def _mysql(base: str, args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> bool:
    parsed = parse_options(args, _MYSQL_VALUES, _MYSQL_FLAGS, attached=frozenset({"-p"}))
    if parsed is None or cmd.stdin_text is not None:
        return False
    opts, pos = parsed
    hosts = opts.get("-h", []) + opts.get("--host", [])
    sql = opts.get("-e", []) + opts.get("--execute", [])
    if any(w.dynamic for w in pos) or not all(local_host(h) for h in hosts) or not sql:
        return False
    if not all(read_only_sql(s, mysql=True) for s in sql):
        return _changes_data(base, f, sql)
    f.network = True
    f.note(f"{base} -e runs read-only queries on a local server")
    return True


def _sqlite(base: str, args: list[Word], f: Facts, cmd: Cmd, ctx: Context) -> bool:
    parsed = parse_options(args, _SQLITE_VALUES, _SQLITE_FLAGS)
    if parsed is None or cmd.stdin_text is not None:
        return False
    _, pos = parsed
    if len(pos) < 2 or any(w.dynamic for w in pos):
        return False  # no statement: it reads statements from its input
    path = ctx.path(pos[0], cmd.cwd)
    if pos[0].text != ":memory:" and (path is None or not ctx.inside(path)):
        return False  # a database elsewhere (a browser's cookies): ask
    if not all(_SQLITE_DOT.match(w.text) or read_only_sql(w.text, sqlite=True) for w in pos[1:]):
        f.opaque(
            "sqlite3 runs statements or dot-commands that may change the database, "
            "write files, run programs or load extensions"
        )
        return True
    if pos[0].text != ":memory:":
        note_read(f, pos[0], cmd.cwd, ctx)
    f.note("sqlite3 shows a local database's schema or runs read-only queries")
    return True


DATABASE_JUDGES = {"psql": _psql, "mysql": _mysql, "mariadb": _mysql, "sqlite3": _sqlite}
