"""Is this SQL text only a query? A deliberately narrow yes.

A statement passes when it starts with a reading keyword (SELECT, SHOW, EXPLAIN without
ANALYZE, DESCRIBE, TABLE, VALUES, a schema PRAGMA) and calls no function outside a short
list of pure ones: in PostgreSQL, MySQL and SQLite a SELECT can still write
(`SELECT … INTO`, `INTO OUTFILE`, `writefile()`), read server files (`pg_read_file`,
`LOAD_FILE`), load code (`load_extension`) or stop other sessions
(`pg_terminate_backend`). Anything else, including text that merely looks odd, is not
read-only and the command asks.
"""

from __future__ import annotations

import re

from ...lazyre import lazy

_START = lazy(r"^\s*\(*\s*(select|show|explain|describe|desc|table|values|with)\b", re.I)
# A statement that reads first can still write inside (`WITH d AS (DELETE … RETURNING *)`).
_DML = lazy(
    r"\b(insert|update|delete|merge|upsert|create|drop|alter|truncate"
    r"|grant|revoke|copy|call|do|execute|exec|set|reset|load|handler|attach"
    r"|detach|vacuum|reindex|cluster|refresh|notify|listen)\b",
    re.I,
)
_SQLITE_PRAGMA = lazy(
    r"^\s*pragma\s+(\w+\.)?(table_info|table_xinfo|index_list"
    r"|index_info|index_xinfo|database_list|table_list"
    r"|foreign_key_list|collation_list|function_list|compile_options"
    r"|user_version|schema_version|page_count|page_size|encoding"
    r"|integrity_check|quick_check)\s*(\(\s*['\"\w.]*\s*\))?\s*$",
    re.I,
)
_MYSQL_USE = lazy(r"^\s*use\s+`?\w+`?\s*$", re.I)
_WRITES = lazy(
    r"\b(into|for\s+(update|share|no\s+key\s+update|key\s+share)|analy[sz]e"
    r"|lock|outfile|dumpfile)\b",
    re.I,
)
_CALL = lazy(r"([A-Za-z_][\w$]*)\s*\(")
_PURE = frozenset(
    re.split(
        r"\s+",
        """
count sum avg min max lower upper length char_length character_length octet_length coalesce
nullif greatest least round floor ceil ceiling abs sign trim ltrim rtrim btrim substr substring
replace concat concat_ws left right position strpos split_part to_char to_date to_timestamp
to_number date_trunc date_part extract now current_date current_time current_timestamp age
string_agg array_agg json_agg jsonb_agg json_build_object jsonb_build_object row_number rank
dense_rank lag lead first_value last_value cast version current_user current_database
current_schema pg_size_pretty pg_database_size pg_relation_size pg_total_relation_size
pg_table_size pg_indexes_size format_type obj_description col_description date datetime
strftime julianday typeof ifnull group_concat instr hex quote database schema user
exists in any all some values over filter within as from join on using and or not select where
when then case row array interval is like ilike between by having limit offset union except
intersect distinct lateral char varchar int integer bigint numeric decimal text timestamp
""".strip(),
    )
)


def read_only_sql(text: str, *, mysql: bool = False, sqlite: bool = False) -> bool:
    """True only when every statement of `text` is a plain query (see the module doc)."""
    statements = [s for s in text.split(";") if s.strip()]
    if not statements or "\\" in text or ("`" in text and not mysql):
        return False
    for s in statements:
        if sqlite and _SQLITE_PRAGMA.match(s):
            continue
        if mysql and _MYSQL_USE.match(s):
            continue
        if not _START.match(s) or _WRITES.search(s) or _DML.search(_strip_strings(s)):
            return False
        if any(name.lower() not in _PURE for name in _CALL.findall(_strip_strings(s))):
            return False
    return True


def _strip_strings(s: str) -> str:
    """Text inside quotes is data, not a call (`WHERE name = 'f(x)'`)."""
    return re.sub(r"'(?:[^']|'')*'", "''", s)
