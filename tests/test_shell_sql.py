"""The read-only SQL judgement behind `psql -c`, `mysql -e` and `sqlite3 FILE SQL`."""

from __future__ import annotations

import pytest

from signoff.shell.judges.sql import read_only_sql


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT 1",
        "select count(*) from users where name = 'f(x)'",
        "SHOW search_path",
        "EXPLAIN SELECT * FROM t",
        "DESCRIBE users",
        "TABLE users",
        "VALUES (1), (2)",
        "select u.id, max(o.total) from users u join orders o on o.user_id = u.id group by u.id",
        "with recent as (select * from t) select * from recent",
        "select * from t where id in (select id from s);",
        "SELECT version()",
        "select exists (select 1 from t)",
        "select replace(name, 'a', 'b') from t",
        "select * from t where note = 'please delete me'",
    ],
)
def test_queries_pass(sql: str) -> None:
    assert read_only_sql(sql)


@pytest.mark.parametrize(
    "sql",
    [
        "DELETE FROM users",
        "update t set a = 1",
        "insert into t values (1)",
        "drop table t",
        "select 1; drop table t",
        "select * into backup from users",
        "select * from t for update",
        "explain analyze delete from t",
        "EXPLAIN (ANALYZE) select 1",
        "select pg_terminate_backend(1)",
        "select pg_read_file('/etc/passwd')",
        "select lo_export(1, '/tmp/x')",
        "select setval('s', 1)",
        "select nextval('s')",
        "select my_function()",
        "copy t to '/tmp/x'",
        "vacuum",
        "grant all on t to x",
        "with d as (delete from t returning *) select * from d",
        "",
        "  ;  ",
        "\\! rm -rf src",
        "select * from t into outfile '/tmp/x'",
        "select load_file('/etc/shadow')",
        "lock tables t write",
    ],
)
def test_anything_else_is_not_read_only(sql: str) -> None:
    assert not read_only_sql(sql)
    assert not read_only_sql(sql, mysql=True)
    assert not read_only_sql(sql, sqlite=True)


def test_dialect_extras() -> None:
    assert read_only_sql("PRAGMA table_info(users)", sqlite=True)
    assert not read_only_sql("PRAGMA table_info(users)")
    assert not read_only_sql("PRAGMA journal_mode = delete", sqlite=True)
    assert not read_only_sql("select load_extension('./x.so')", sqlite=True)
    assert not read_only_sql("select writefile('x', 'y')", sqlite=True)
    assert read_only_sql("USE app; SHOW TABLES", mysql=True)
    assert not read_only_sql("USE app")
