"""`signoff.plainpath.joined` spells a path as pathlib does."""

from __future__ import annotations

from pathlib import PurePosixPath

from hypothesis import given, settings
from hypothesis import strategies as st

from signoff.plainpath import joined

PIECES = ["", ".", "..", "/", "//", "///", "a", "b.c", "a/", "/a", "//a", "///a", "a//b", "./a"]


def test_joined_is_pure_posix_path_for_every_pair_of_pieces() -> None:
    for first in PIECES:
        assert joined(first) == str(PurePosixPath(first))
        for second in PIECES:
            assert joined(first, second) == str(PurePosixPath(first, second)), (first, second)


@settings(max_examples=300)
@given(st.lists(st.text(alphabet="/.ab", max_size=8), min_size=1, max_size=4))
def test_joined_equals_pathlib_on_any_parts(parts: list[str]) -> None:
    assert joined(*parts) == str(PurePosixPath(*parts))
