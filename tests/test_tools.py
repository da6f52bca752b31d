"""Built-in workspace tools: real files, real subprocesses, a real local HTTP server."""

from __future__ import annotations

import http.server
import json
import mailbox
import os
import signal
import stat
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from signoff.exceptions import ConflictError, InvalidInput, SchemaVersionError
from signoff.gate import Gate
from signoff.models import ToolCall
from signoff.policy import Policy
from signoff.tools import BUILTIN_SPECS
from signoff.workspace import (
    MAX_READ_BYTES,
    OUTBOX,
    OutsideWorkspace,
    RevertConflict,
    Snapshot,
    ToolError,
    Workspace,
)


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    root = tmp_path / "ws"
    root.mkdir()
    return Workspace(root)


def write(ws: Workspace, rel: str, content: str | bytes) -> Path:
    path = Path(ws.root) / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    return path


def preview(ws: Workspace, name: str, **arguments: Any) -> str:
    return ws.preview(ToolCall(name, arguments), BUILTIN_SPECS[name])


# ---------------------------------------------------------------------- wiring


def test_mapping_has_exactly_the_builtins(ws: Workspace) -> None:
    assert set(ws.as_mapping()) == set(BUILTIN_SPECS)
    assert ws.as_mapping()["read_file"] == ws.read_file


def test_openai_tools_shape(ws: Workspace) -> None:
    tools = ws.openai_tools()
    assert [t["function"]["name"] for t in tools] == list(BUILTIN_SPECS)
    for entry in tools:
        assert entry["type"] == "function"
        fn = entry["function"]
        assert fn["description"]
        params = fn["parameters"]
        assert params["type"] == "object"
        assert set(params["required"]) <= set(params["properties"])
        assert "title" not in json.dumps(params)
    by_name = {t["function"]["name"]: t["function"]["parameters"] for t in tools}
    assert by_name["edit_file"]["required"] == ["path", "old", "new"]
    assert by_name["list_dir"]["required"] == []
    assert by_name["list_dir"]["properties"]["path"] == {"type": "string"}
    assert by_name["send_email"]["properties"]["cc"]["type"] == "array"
    assert by_name["create_project"]["properties"]["files"]["type"] == "object"
    assert len(ws.openai_tools(["read_file"])) == 1
    with pytest.raises(InvalidInput, match="not a built-in"):
        ws.openai_tools(["nope"])


def test_root_must_be_a_directory(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="not a directory"):
        Workspace(tmp_path / "missing")


# ---------------------------------------------------------------------- boundaries


@pytest.mark.parametrize(
    "tool, arguments",
    [
        ("read_file", {"path": "../secret.txt"}),
        ("read_file", {"path": "{outside}/secret.txt"}),
        ("read_file", {"path": "link/secret.txt"}),
        ("read_file", {"path": "filelink"}),
        ("list_dir", {"path": ".."}),
        ("search_code", {"pattern": "x", "path": "../"}),
        ("write_file", {"path": "../new.txt", "content": "x"}),
        ("write_file", {"path": "link/new.txt", "content": "x"}),
        ("edit_file", {"path": "filelink", "old": "top", "new": "x"}),
        ("create_project", {"path": "../p", "files": {"a": "x"}}),
        ("create_project", {"path": "p", "files": {"../../escape": "x"}}),
        ("create_project", {"path": "p", "files": {"/abs": "x"}}),
        ("delete_file", {"path": "../secret.txt"}),
        ("delete_file", {"path": "link/secret.txt"}),
    ],
)
def test_paths_outside_the_root_are_refused(
    tmp_path: Path, ws: Workspace, tool: str, arguments: dict[str, Any]
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("top secret\n")
    os.symlink(tmp_path, Path(ws.root) / "link")
    os.symlink(secret, Path(ws.root) / "filelink")
    args = {
        k: v.replace("{outside}", str(tmp_path)) if isinstance(v, str) else v
        for k, v in arguments.items()
    }
    with pytest.raises(InvalidInput, match=r"outside|leaves|relative"):
        ws.as_mapping()[tool](**args)
    assert secret.read_text() == "top secret\n"
    assert not (tmp_path / "new.txt").exists()
    assert not (tmp_path / "p").exists()


def test_outside_error_is_clear(tmp_path: Path, ws: Workspace) -> None:
    with pytest.raises(OutsideWorkspace, match=r"outside the workspace .*refused"):
        ws.read_file("../x")


def test_allow_outside_flag(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "out.txt").write_text("outside\n")
    assert Workspace(tmp_path / "ws", allow_outside=True).read_file("../out.txt") == "outside\n"


def test_symlink_inside_the_root_is_fine(ws: Workspace) -> None:
    write(ws, "real/a.txt", "a\n")
    os.symlink(Path(ws.root) / "real", Path(ws.root) / "alias")
    assert ws.read_file("alias/a.txt") == "a\n"
    assert ws.read_file(str(Path(ws.root) / "real/a.txt")) == "a\n"  # absolute, inside


# ---------------------------------------------------------------------- read tools


def test_read_file(ws: Workspace) -> None:
    write(ws, "a.txt", "héllo\n")
    assert ws.read_file("a.txt") == "héllo\n"
    with pytest.raises(InvalidInput, match="no such file"):
        ws.read_file("missing.txt")
    with pytest.raises(InvalidInput, match="is a directory"):
        ws.read_file(".")


def test_read_file_truncates_and_says_so(ws: Workspace) -> None:
    write(ws, "big.txt", "x" * (MAX_READ_BYTES + 1000))
    text = ws.read_file("big.txt")
    assert text.startswith("x" * 1000)
    assert "truncated" in text and "1000 bytes not shown" in text


def test_read_file_binary_is_described(ws: Workspace) -> None:
    write(ws, "img.bin", b"\x89PNG\x00\x01\x02" * 10)
    assert ws.read_file("img.bin") == "img.bin: binary file, 70 B; not shown"
    write(ws, "latin.txt", b"caf\xe9\n")
    assert "non-UTF-8" in ws.read_file("latin.txt")


def test_list_dir(ws: Workspace) -> None:
    for rel in ("b.txt", "A.md", "src/x.py", ".git/HEAD", "node_modules/m/i.js", ".env"):
        write(ws, rel, "x")
    listing = ws.list_dir().splitlines()
    assert listing[:4] == [".env", "A.md", "b.txt", "src/"]
    assert listing[-1] == "(not listed: .git/, node_modules/)"
    assert ws.list_dir("src") == "x.py"
    (Path(ws.root) / "empty").mkdir()
    assert ws.list_dir("empty") == "(empty directory)"
    with pytest.raises(InvalidInput, match="not a directory"):
        ws.list_dir("b.txt")
    with pytest.raises(InvalidInput, match="no such directory"):
        ws.list_dir("nope")


def test_list_dir_caps_entries(ws: Workspace) -> None:
    for i in range(510):
        write(ws, f"many/f{i:04}", "")
    listing = ws.list_dir("many").splitlines()
    assert len(listing) == 501
    assert listing[-1] == "[... 10 more entries not shown]"


def test_search_code(ws: Workspace) -> None:
    write(ws, "src/app.py", "import os\ndef main():\n    return os.getcwd()\n")
    write(ws, "src/lib.py", "def helper(): pass\n")
    write(ws, ".venv/lib/site.py", "def main(): pass\n")
    write(ws, "blob.bin", b"def main\x00")
    out = ws.search_code(r"def \w+\(")
    assert out.splitlines() == ["src/app.py:2:def main():", "src/lib.py:1:def helper(): pass"]
    assert ws.search_code("helper", "src/lib.py") == "src/lib.py:1:def helper(): pass"
    assert ws.search_code("nothing here") == "no matches for 'nothing here'"


def test_search_code_bad_regex_is_literal(ws: Workspace) -> None:
    write(ws, "a.py", "x = f(1\n")
    out = ws.search_code("f(1")
    assert out.splitlines()[0] == "a.py:1:x = f(1"
    assert "searched as literal text" in out


def test_search_code_caps_results(ws: Workspace) -> None:
    write(ws, "many.txt", "hit\n" * 300)
    lines = ws.search_code("hit").splitlines()
    assert len(lines) == 201
    assert "stopped after 200 matches" in lines[-1]


def test_search_code_skips_symlink_to_outside(tmp_path: Path, ws: Workspace) -> None:
    (tmp_path / "secret.txt").write_text("password=hunter2\n")
    os.symlink(tmp_path / "secret.txt", Path(ws.root) / "leak.txt")
    assert ws.search_code("password").startswith("no matches")


# ---------------------------------------------------------------------- file changes


def test_write_file(ws: Workspace) -> None:
    assert ws.write_file("new/dir/a.txt", "one\n") == "created new/dir/a.txt (4 B)"
    path = Path(ws.root) / "new/dir/a.txt"
    path.chmod(0o755)
    assert ws.write_file("new/dir/a.txt", "two\n").startswith("overwrote")
    assert path.read_text() == "two\n"
    assert path.stat().st_mode & 0o777 == 0o755  # mode kept across the atomic replace
    assert os.listdir(path.parent) == ["a.txt"]  # no temporary file left behind
    with pytest.raises(InvalidInput, match="is a directory"):
        ws.write_file("new", "x")


def test_edit_file(ws: Workspace) -> None:
    write(ws, "a.py", "x = 1\ny = 2\nx = 1\n")
    assert ws.edit_file("a.py", "y = 2", "y = 3") == "edited a.py: replaced 1 occurrence"
    assert (Path(ws.root) / "a.py").read_text() == "x = 1\ny = 3\nx = 1\n"
    with pytest.raises(InvalidInput, match="found 2 times"):
        ws.edit_file("a.py", "x = 1", "x = 2")
    with pytest.raises(InvalidInput, match="was not found"):
        ws.edit_file("a.py", "zzz", "x")
    with pytest.raises(InvalidInput, match="non-empty"):
        ws.edit_file("a.py", "", "x")
    with pytest.raises(InvalidInput, match="no such file"):
        ws.edit_file("nope.py", "a", "b")
    write(ws, "b.bin", b"\x00\x01")
    with pytest.raises(InvalidInput, match="binary"):
        ws.edit_file("b.bin", "a", "b")


def test_create_project(ws: Workspace) -> None:
    files = {"README.md": "# demo\n", "src/demo/__init__.py": "", "src/demo/main.py": "print()\n"}
    out = ws.create_project("demo", files)
    assert out == "created 3 files under demo/ (15 B)"
    assert (Path(ws.root) / "demo/src/demo/main.py").read_text() == "print()\n"


def test_create_project_refuses_existing_files_before_writing(ws: Workspace) -> None:
    write(ws, "demo/b.txt", "keep\n")
    with pytest.raises(InvalidInput, match=r"already exists, nothing written: b\.txt"):
        ws.create_project("demo", {"a.txt": "new", "b.txt": "overwrite?"})
    assert not (Path(ws.root) / "demo/a.txt").exists()
    assert (Path(ws.root) / "demo/b.txt").read_text() == "keep\n"
    with pytest.raises(InvalidInput, match="non-empty"):
        ws.create_project("x", {})
    with pytest.raises(InvalidInput, match="leaves the project"):
        ws.create_project("x", {".": "dir itself"})


def test_delete_file(ws: Workspace) -> None:
    write(ws, "a.txt", "bye\n")
    assert ws.delete_file("a.txt") == "deleted a.txt (4 B)"
    assert not (Path(ws.root) / "a.txt").exists()
    (Path(ws.root) / "dir").mkdir()
    with pytest.raises(InvalidInput, match="is a directory; delete_file deletes single files"):
        ws.delete_file("dir")
    with pytest.raises(InvalidInput, match="no such file"):
        ws.delete_file("a.txt")


def test_delete_file_removes_a_link_not_its_target(ws: Workspace) -> None:
    target = write(ws, "real.txt", "data\n")
    os.symlink(target, Path(ws.root) / "link.txt")
    ws.delete_file("link.txt")
    assert target.read_text() == "data\n"
    assert not os.path.lexists(Path(ws.root) / "link.txt")


# ---------------------------------------------------------------------- shell


def test_execute_command(ws: Workspace) -> None:
    write(ws, "hello.txt", "hi\n")
    out = ws.execute_command("cat hello.txt; echo oops >&2; exit 3")
    assert out == "exit code: 3\nhi\noops\n"
    assert ws.execute_command("true") == "exit code: 0\n(no output)"
    assert ws.execute_command("pwd").splitlines()[1] == ws.root


def test_execute_command_is_never_interactive(ws: Workspace) -> None:
    out = ws.execute_command('read -r line; echo "got:$line:$?"', timeout=5)
    assert "got::1" in out
    assert "SIGNOFF_IDEMPOTENCY_KEY=req_1" in ws.execute_command(
        "env | grep SIGNOFF_IDEMPOTENCY_KEY", idempotency_key="req_1"
    )


def _gone(pid: int, within: float = 3.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


@pytest.mark.slow  # waits for a timeout
def test_execute_command_timeout_kills_the_process_group(ws: Workspace) -> None:
    started = time.monotonic()
    command = "echo started; sleep 30 & echo $! > bg.pid; sleep 30; echo never"
    out = ws.execute_command(command, timeout=0.5)
    assert time.monotonic() - started < 5
    assert out.startswith("timed out after 0.5 s")
    assert "started" in out and "never" not in out
    assert _gone(int((Path(ws.root) / "bg.pid").read_text()))  # the background child too


def test_execute_command_truncates_head_and_tail(tmp_path: Path) -> None:
    ws = Workspace(tmp_path, max_output=2000)
    out = ws.execute_command("seq 1 100000")
    assert out.startswith("exit code: 0\n1\n2\n3\n")
    assert out.rstrip().endswith("99999\n100000")
    assert "bytes (" in out and "lines) omitted ...]" in out
    assert len(out) < 2300


def test_execute_command_does_not_wait_for_background_jobs(ws: Workspace) -> None:
    started = time.monotonic()
    out = ws.execute_command("sleep 30 & echo $! > bg.pid; echo done", timeout=20)
    os.kill(int((Path(ws.root) / "bg.pid").read_text()), signal.SIGKILL)  # ours, by id
    assert time.monotonic() - started < 5
    assert out.startswith("exit code: 0") and "done" in out
    assert "background processes still hold the output open" in out


def test_execute_command_rejects_bad_input(ws: Workspace) -> None:
    with pytest.raises(InvalidInput, match="non-empty"):
        ws.execute_command("  ")
    for bad in (0, -1, "soon"):
        with pytest.raises(InvalidInput, match="positive"):
            ws.execute_command("true", timeout=bad)  # type: ignore[arg-type]


# ---------------------------------------------------------------------- fetch_url


class _Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        routes: dict[str, tuple[int, str, bytes]] = {
            "/hello": (200, "text/plain; charset=utf-8", "héllo web\n".encode()),
            "/missing": (404, "text/plain", b"no such page"),
            "/binary": (200, "application/octet-stream", b"\x00\x01\x02"),
            "/away": (302, "text/plain", b"moved"),
            "/huge": (200, "text/plain", b"y" * (1024 * 1024 + 10)),
        }
        if self.path == "/redirect":
            self.send_response(302)
            self.send_header("Location", "/hello")
            self.end_headers()
            return
        status, kind, body = routes.get(self.path, (500, "text/plain", b"?"))
        self.send_response(status)
        if self.path == "/away":
            self.send_header("Location", "http://other.invalid/steal")
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_fetch_url(ws: Workspace, server: str) -> None:
    out = ws.fetch_url(server + "/hello")
    assert out == "HTTP 200 OK\nContent-Type: text/plain; charset=utf-8\n\nhéllo web\n"
    assert ws.fetch_url(server + "/missing").startswith("HTTP 404 Not Found")
    assert "no such page" in ws.fetch_url(server + "/missing")
    assert "(redirected)" in ws.fetch_url(server + "/redirect")
    assert "binary content, 3 B; not shown" in ws.fetch_url(server + "/binary")
    away = ws.fetch_url(server + "/away")  # another host: not followed, shown
    assert away.startswith("HTTP 302")
    assert "Location: http://other.invalid/steal (a redirect to another host is not" in away
    huge = ws.fetch_url(server + "/huge")
    assert huge.endswith("[... body cut at 1.0 MiB of 1048586 bytes]")


def test_fetch_url_errors(ws: Workspace, server: str) -> None:
    with pytest.raises(InvalidInput, match="not an http"):
        ws.fetch_url("file:///etc/passwd")
    closed = server.rsplit(":", 1)[0] + ":1"
    with pytest.raises(ToolError, match="could not fetch"):
        ws.fetch_url(closed + "/x")


# ---------------------------------------------------------------------- send_email


def test_send_email_writes_the_outbox(ws: Workspace) -> None:
    out = ws.send_email("Bob <bob@example.com>", "Report", "Hello Bob,\nall done.\n", ["c@x.org"])
    assert out.startswith("sent to Bob <bob@example.com> (cc c@x.org): <")
    box = mailbox.mbox(os.path.join(ws.root, OUTBOX))
    [message] = list(box)
    assert message["To"] == "Bob <bob@example.com>"
    assert message["Cc"] == "c@x.org"
    assert message["Subject"] == "Report"
    assert message["Message-ID"] in out
    payload = message.get_payload(decode=True)
    assert isinstance(payload, bytes)
    assert payload.decode() == "Hello Bob,\nall done.\n"


def test_send_email_is_exactly_once_per_idempotency_key(ws: Workspace) -> None:
    first = ws.send_email("a@x.org", "Hi", "one", idempotency_key="req_1")
    again = ws.send_email("a@x.org", "Hi", "one", idempotency_key="req_1")
    other = ws.send_email("a@x.org", "Hi", "two", idempotency_key="req_2")
    box = list(mailbox.mbox(os.path.join(ws.root, OUTBOX)))
    assert len(box) == 2
    assert "not sent again" in again and first.split(": ")[1].split(",")[0] in again
    assert "sent to" in other
    assert box[0]["X-Signoff-Idempotency-Key"] == "req_1"


def test_send_email_concurrent_same_key_sends_once(ws: Workspace) -> None:
    threads = [
        threading.Thread(
            target=ws.send_email, args=("a@x.org", "Hi", "b"), kwargs={"idempotency_key": "k"}
        )
        for _ in range(8)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(list(mailbox.mbox(os.path.join(ws.root, OUTBOX)))) == 1


@pytest.mark.parametrize(
    "to, subject, cc, match",
    [
        ("not-an-address", "s", None, "not an email address"),
        ("a@x.org", "s\nBcc: evil@x.org", None, "one line"),
        ("a@x.org", "s", ["b@x.org\r\nBcc: e@x.org"], "one line"),
        ("a@x.org", "s", [3], "list of addresses"),
    ],
)
def test_send_email_refuses_bad_headers(
    ws: Workspace, to: str, subject: str, cc: Any, match: str
) -> None:
    with pytest.raises(InvalidInput, match=match):
        ws.send_email(to, subject, "body", cc)
    assert not os.path.exists(os.path.join(ws.root, OUTBOX))


def test_ask_human_cannot_run(ws: Workspace) -> None:
    with pytest.raises(InvalidInput, match="answered by a person"):
        ws.ask_human("Which one?", ["a", "b"])


# ---------------------------------------------------------------------- previews


def test_preview_write_file_diff(ws: Workspace) -> None:
    write(ws, "a.py", "one\ntwo\nthree\n")
    text = preview(ws, "write_file", path="a.py", content="one\n2\nthree\n")
    assert text.startswith("overwrite a.py (14 B -> 12 B)")
    assert "--- a/a.py\n+++ b/a.py\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n" in text
    assert "no change" in preview(ws, "write_file", path="a.py", content="one\ntwo\nthree\n")


def test_preview_write_file_new_file(ws: Workspace) -> None:
    text = preview(ws, "write_file", path="src/new.py", content="print(1)\nprint(2)")
    assert text == "new file: src/new.py (17 B, 2 lines)\n\nprint(1)\nprint(2)"


def test_preview_marks_missing_final_newline(ws: Workspace) -> None:
    write(ws, "a.txt", "x\n")
    assert "\\ No newline at end of file" in preview(ws, "write_file", path="a.txt", content="y")


def test_preview_edit_file(ws: Workspace) -> None:
    write(ws, "a.py", "x = 1\ny = 2\nx = 1\n")
    text = preview(ws, "edit_file", path="a.py", old="y = 2", new="y = 3")
    assert "-y = 2\n+y = 3\n" in text
    assert "found 2 times" in preview(ws, "edit_file", path="a.py", old="x = 1", new="z")
    assert "does not exist" in preview(ws, "edit_file", path="b.py", old="x", new="z")


def test_preview_create_project_tree(ws: Workspace) -> None:
    text = preview(
        ws,
        "create_project",
        path="demo",
        files={"README.md": "# demo\n", "src/main.py": "print()\n", "src/util/x.py": ""},
    )
    assert text.splitlines()[:8] == [
        "create 3 files under demo/ (15 B)",
        "",
        "demo/",
        "├── README.md  (7 B)",
        "└── src/",
        "    ├── main.py  (8 B)",
        "    └── util/",
        "        └── x.py  (0 B)",
    ]
    assert "==> src/main.py <==\nprint()\n" in text


def test_preview_delete_file(ws: Workspace) -> None:
    write(ws, "log.txt", "".join(f"line {i}\n" for i in range(30)))
    text = preview(ws, "delete_file", path="log.txt")
    assert text.startswith("delete log.txt (230 B, 30 lines); first lines:")
    assert "line 19" in text and "line 20" not in text
    assert "the rest of the file (230 B in all) not shown" in text


def test_preview_email_is_the_full_message(ws: Workspace) -> None:
    body = "Dear Bob,\n\n" + "long paragraph. " * 200 + "\nRegards"
    text = preview(ws, "send_email", to="bob@x.org", subject="Q3", body=body, cc=["c@x.org"])
    assert text.startswith(
        "From: signoff-agent@localhost\nTo: bob@x.org\nCc: c@x.org\nSubject: Q3\n\nDear Bob,"
    )
    assert body in text


def test_preview_other_tools(ws: Workspace) -> None:
    assert preview(ws, "execute_command", command="rm -rf build/").startswith("rm -rf build/\n")
    assert preview(ws, "fetch_url", url="https://example.com") == "GET https://example.com"
    assert preview(ws, "ask_human", question="Which?", options=["a", "b"]) == "Which?\n\n1. a\n2. b"
    assert json.loads(preview(ws, "read_file", path="x")) == {"path": "x"}


def test_preview_outside_path_does_not_read_it(tmp_path: Path, ws: Workspace) -> None:
    (tmp_path / "key").write_text("PRIVATE KEY\n")
    text = preview(ws, "write_file", path="../key", content="x")
    assert "outside the workspace" in text and "PRIVATE KEY" not in text


def test_preview_never_cuts_silently(ws: Workspace) -> None:
    text = preview(ws, "write_file", path="big.txt", content="z" * 100_000)
    assert "more characters" in text and "not shown" in text


def test_preview_understands_aliases(ws: Workspace) -> None:
    write(ws, "a.txt", "old\n")
    text = ws.preview(
        ToolCall("Edit", {"file_path": "a.txt", "old_string": "old", "new_string": "new"}),
        BUILTIN_SPECS["edit_file"],
    )
    assert "-old\n+new\n" in text


def test_preview_is_a_gate_previewer(ws: Workspace) -> None:
    from signoff.testing import ScriptedChannel

    write(ws, "a.txt", "old\n")
    channel = ScriptedChannel()
    gate = Gate(Policy(workspace=ws.root), channel=channel, previewer=ws.preview)
    result = gate.execute(ToolCall("delete_file", {"path": "a.txt"}), ws.delete_file)
    assert result.outcome == "rejected"
    assert channel.prompts[0].request.preview.startswith("delete a.txt (4 B, 1 lines)")
    assert (Path(ws.root) / "a.txt").exists()


# ---------------------------------------------------------------------- snapshot / revert


def _run(ws: Workspace, name: str, **arguments: Any) -> Snapshot:
    _, snapshot = ws.run_recorded(ToolCall(name, arguments))
    assert snapshot is not None
    return Snapshot.from_json(json.loads(json.dumps(snapshot.to_json())))  # as stored


def test_revert_write_file(ws: Workspace) -> None:
    path = write(ws, "a.txt", "before\n")
    path.chmod(0o640)
    snapshot = _run(ws, "write_file", path="a.txt", content="after\n")
    assert path.read_text() == "after\n"
    assert ws.revert(snapshot) == "reverted write_file: a.txt"
    assert path.read_text() == "before\n"
    assert path.stat().st_mode & 0o777 == 0o640


def test_revert_created_file_deletes_it_and_its_new_dirs(ws: Workspace) -> None:
    snapshot = _run(ws, "write_file", path="new/deep/a.txt", content="x")
    assert snapshot.dirs == ("new", "new/deep")
    ws.revert(snapshot)
    assert not (Path(ws.root) / "new").exists()


def test_revert_edit_and_delete(ws: Workspace) -> None:
    path = write(ws, "a.py", "x = 1\n")
    edit = _run(ws, "edit_file", path="a.py", old="1", new="2")
    ws.revert(edit)
    assert path.read_text() == "x = 1\n"
    delete = _run(ws, "delete_file", path="a.py")
    assert not path.exists()
    ws.revert(delete)
    assert path.read_text() == "x = 1\n"


def test_revert_create_project(ws: Workspace) -> None:
    write(ws, "demo/keep.txt", "mine")
    snapshot = _run(ws, "create_project", path="demo", files={"a.txt": "a", "src/b.py": "b"})
    ws.revert(snapshot)
    assert sorted(os.listdir(Path(ws.root) / "demo")) == ["keep.txt"]


def test_revert_refused_after_a_later_change(ws: Workspace) -> None:
    path = write(ws, "a.txt", "v1\n")
    snapshot = _run(ws, "write_file", path="a.txt", content="v2\n")
    path.write_text("v3 by a person\n")
    with pytest.raises(RevertConflict, match=r"changed since the call: a\.txt") as info:
        ws.revert(snapshot)
    assert isinstance(info.value, ConflictError)
    assert path.read_text() == "v3 by a person\n"


def test_revert_refused_when_a_deleted_file_came_back(ws: Workspace) -> None:
    write(ws, "a.txt", "v1\n")
    snapshot = _run(ws, "delete_file", path="a.txt")
    write(ws, "a.txt", "recreated\n")
    with pytest.raises(RevertConflict):
        ws.revert(snapshot)


def test_revert_refuses_an_unsettled_snapshot(ws: Workspace) -> None:
    snapshot = ws.snapshot(ToolCall("write_file", {"path": "a.txt", "content": "x"}))
    assert snapshot is not None
    with pytest.raises(RevertConflict, match="never settled"):
        ws.revert(snapshot)


def test_snapshot_json(ws: Workspace) -> None:
    write(ws, "a.bin", b"\x00\xff binary")
    snapshot = _run(ws, "write_file", path="a.bin", content="text")
    doc = snapshot.to_json()
    assert doc["v"] == 1 and doc["tool"] == "write_file"
    assert doc["entries"][0]["before"] == "AP8gYmluYXJ5"
    assert Snapshot.from_json(doc) == snapshot
    with pytest.raises(SchemaVersionError):
        Snapshot.from_json({**doc, "v": 99})
    with pytest.raises(InvalidInput):
        Snapshot.from_json({"v": 1, "tool": "x"})


def test_snapshot_only_for_file_changes(ws: Workspace) -> None:
    assert ws.snapshot(ToolCall("execute_command", {"command": "ls"})) is None
    assert ws.snapshot(ToolCall("read_file", {"path": "a"})) is None
    assert ws.snapshot(ToolCall("write_file", {"path": "../x", "content": ""})) is None
    result, snapshot = ws.run_recorded(ToolCall("list_dir", {}))
    assert snapshot is None and result == "(empty directory)"


def test_revert_refuses_paths_outside_the_root(tmp_path: Path, ws: Workspace) -> None:
    snapshot = _run(ws, "write_file", path="a.txt", content="x")
    doc = snapshot.to_json()
    doc["entries"][0]["path"] = "../victim.txt"
    with pytest.raises(OutsideWorkspace):
        ws.revert(Snapshot.from_json(doc))


def test_revert_deleted_symlink(ws: Workspace) -> None:
    target = write(ws, "real.txt", "data\n")
    os.symlink("real.txt", Path(ws.root) / "link.txt")
    snapshot = _run(ws, "delete_file", path="link.txt")
    ws.revert(snapshot)
    assert os.readlink(Path(ws.root) / "link.txt") == "real.txt"
    assert target.read_text() == "data\n"


def test_gate_notify_write_is_recorded_and_revertible(ws: Workspace) -> None:
    path = write(ws, "notes.md", "draft\n")
    kept: list[tuple[ToolCall, Snapshot]] = []
    tools = ws.as_mapping(on_snapshot=lambda call, snap: kept.append((call, snap)))
    gate = Gate(Policy(workspace=ws.root), previewer=ws.preview)
    call = ToolCall("write_file", {"path": "notes.md", "content": "final\n"})
    result = gate.execute(call, tools["write_file"])
    assert result.ran and result.verdict.effect == "notify"
    assert path.read_text() == "final\n"
    [(recorded, snapshot)] = kept
    assert recorded == ToolCall("write_file", call.arguments)
    ws.revert(Snapshot.from_json(snapshot.to_json()))
    assert path.read_text() == "draft\n"


def test_recording_reports_even_when_the_tool_fails(ws: Workspace) -> None:
    kept: list[Snapshot] = []
    tools = ws.as_mapping(on_snapshot=lambda call, snap: kept.append(snap))
    write(ws, "a.txt", "x\n")
    with pytest.raises(InvalidInput):
        tools["edit_file"](path="a.txt", old="nope", new="y")
    assert len(kept) == 1 and kept[0].entries[0].settled
    assert tools["read_file"] == ws.read_file


def test_overwriting_a_file_with_a_long_name_keeps_its_mode(tmp_path: Path) -> None:
    name = "n" * 250  # the temporary file beside it must not exceed NAME_MAX
    target = tmp_path / name
    target.write_text("old")
    target.chmod(0o750)
    ws = Workspace(tmp_path)
    assert ws.write_file(name, "new").startswith("overwrote")
    assert target.read_text() == "new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o750
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]  # no temporary file left
