"""Differential tests: the targets signoff reads from a patch or an archive include every
file the real `patch` and `tar` say they touch, for generated inputs (Hypothesis).

A name the real program writes but signoff does not list would be a write nobody judged;
these tests look for such a name by asking the programs themselves (`patch --dry-run`,
`tar -t`) on the same bytes.
"""

from __future__ import annotations

import io
import os
import re
import shlex
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from signoff.shell import analyze

pytestmark = pytest.mark.skipif(
    not (shutil.which("patch") and shutil.which("tar")), reason="needs the patch and tar binaries"
)

_COMPONENT = st.one_of(
    st.sampled_from([".git", "hooks", ".envrc", "src", "a b", ".husky", "x.y", "-d", "HEAD"]),
    st.text(alphabet="abc.-_ ", min_size=1, max_size=6).filter(
        lambda t: (
            t.strip() and t not in (".", "..") and not t.startswith(" ") and not t.endswith(" ")
        )
    ),
)
_PATH = st.lists(_COMPONENT, min_size=1, max_size=3).map("/".join)


def _header(style: str, old: str, new: str) -> str:
    if style == "unified-tab":
        return f"--- {old}\t2020-01-01 00:00:00\n+++ {new}\t2020-01-01 00:00:00\n"
    if style == "unified-space":
        return f"--- {old} 2020-01-01 00:00:00\n+++ {new} 2020-01-01 00:00:00\n"
    if style == "index":
        return f"Index: {new}\n--- {old}\n+++ {new}\n"
    return f"diff --git {old} {new}\nnew file mode 100644\n--- /dev/null\n+++ {new}\n"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    paths=st.lists(_PATH, min_size=1, max_size=3),
    style=st.sampled_from(["unified-tab", "unified-space", "index", "git"]),
    prefix=st.sampled_from(["", "a/", "x/y/"]),
    level=st.sampled_from([None, 0, 1, 2]),
)
def test_every_file_patch_checks_is_judged(
    paths: list[str], style: str, prefix: str, level: int | None
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        ws = os.path.realpath(tmp)
        text = "".join(
            _header(style, prefix + p, prefix + p) + "@@ -0,0 +1 @@\n+hi\n" for p in paths
        )
        Path(ws, "t.patch").write_text(text, encoding="utf-8")
        flag = "" if level is None else f"-p{level} "
        command = f"patch --dry-run --batch {flag}< t.patch"
        done = subprocess.run(
            ["bash", "-c", command], cwd=ws, capture_output=True, text=True, timeout=30
        )
        checked = [
            _unquote(m.group(1))
            for m in re.finditer(
                r"^checking file (.*?)(?: \((?:renamed|copied) from .*\))?$", done.stdout, re.M
            )
        ]
        part = analyze(command, workspace=ws, home=ws).parts[0]
        judged = set(part.writes)
        for name in checked:
            assert os.path.normpath(os.path.join(ws, name)) in judged, (text, name, judged)


def _unquote(name: str) -> str:
    return shlex.split(name)[0] if name[:1] in "'\"" else name


def _ustar_member(name: str) -> bytes:
    info = tarfile.TarInfo(name)
    info.size = 3
    return info.tobuf(format=tarfile.USTAR_FORMAT) + b"hi\n" + b"\0" * 509


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    names=st.lists(_PATH, min_size=1, max_size=4, unique=True),
    junk=st.lists(
        st.sampled_from([b"", b"\xff" * 512, b"\0" * 512, b"\0" * 1024]), min_size=4, max_size=4
    ),
    options=st.sampled_from(["", "--strip-components=1", "-i"]),
)
def test_every_member_tar_lists_is_judged(
    names: list[str], junk: list[bytes], options: str
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        ws = os.path.realpath(tmp)
        data = b"".join(_ustar_member(n) + j for n, j in zip(names, junk, strict=False))
        Path(ws, "t.tar").write_bytes(data + b"\0" * 1024)
        listed = subprocess.run(
            ["tar", "-tf", "t.tar", *options.split()],
            cwd=ws,
            capture_output=True,
            text=True,
            timeout=30,
        ).stdout.splitlines()
        part = next(p for p in analyze(f"tar -xf t.tar {options}", workspace=ws, home=ws).parts)
        judged = set(part.writes)
        strip = 1 if "strip" in options else 0
        for name in listed:
            parts = [c for c in name.split("/") if c][strip:]
            if parts:
                target = os.path.normpath(os.path.join(ws, *parts))
                assert target in judged or part.effect in ("ask", "deny"), (name, judged)


def test_a_real_bad_header_hides_nothing(tmp_path: Path) -> None:
    """The case the property found worth pinning: GNU tar skips a bad header and lists
    what follows; the analysis does too."""
    ws = os.path.realpath(tmp_path)
    data = _ustar_member("ok.txt") + b"\xff" * 512 + _ustar_member(".git/hooks/pre-commit")
    Path(ws, "t.tar").write_bytes(data + b"\0" * 1024)
    with io.BytesIO(data) as raw, tarfile.open(fileobj=raw) as tar:
        assert [m.name for m in tar.getmembers()] == ["ok.txt"]  # Python's default stops
    assert analyze("tar -xf t.tar", workspace=ws, home=ws).effect == "ask"
