"""Rendering of the approval box: alignment, truncation, escaping, plain output."""

from __future__ import annotations

import io
import re
import unicodedata
from typing import Any

import pytest
from rich.cells import cell_len
from rich.console import Console

from signoff.channels.render import build_box, escape_untrusted, render_request
from signoff.i18n import LANGS, MESSAGES
from signoff.models import Request, ShellPartSummary, ToolCall, Verdict


def make_request(
    name: str = "write_file",
    arguments: dict[str, Any] | None = None,
    *,
    risk: Any = "high",
    preview: str = "",
    reasons: tuple[str, ...] = ("outside the workspace",),
    rule: str | None = "ask: write_file(**)",
    parts: tuple[ShellPartSummary, ...] = (),
) -> Request:
    return Request(
        id="req_1",
        call=ToolCall(name, arguments if arguments is not None else {"path": "a.txt"}),
        verdict=Verdict("ask", risk, rule, reasons, tier="write", parts=parts),
        preview=preview,
    )


BORDER_LEFT = set("╭│├╰")
BORDER_RIGHT = set("╮│┤╯")


def assert_aligned(text: str, width: int) -> None:
    lines = text.splitlines()
    assert lines, "nothing rendered"
    for line in lines:
        assert cell_len(line) == width, (cell_len(line), line)
        assert line[0] in BORDER_LEFT and line[-1] in BORDER_RIGHT, line


def east_asian_width(text: str) -> int:
    """An independent measure (not rich's) for text without variation selectors."""
    total = 0
    for char in text:
        if unicodedata.combining(char):
            continue
        total += 2 if unicodedata.east_asian_width(char) in "WF" else 1
    return total


# ----------------------------------------------------------------------------- alignment

WIDE_VALUES = [
    pytest.param({"path": "/用户/王小明/项目/配置文件.json"}, id="chinese-path"),
    pytest.param({"message": "部署完成 🚀🎉 全部通过 ✅"}, id="emoji"),
    pytest.param({"title": "⚠️ 注意 ❤️"}, id="emoji-vs16"),
    pytest.param({"名字": "ｆｕｌｌ　ｗｉｄｔｈ　全角"}, id="fullwidth-key-and-value"),
    pytest.param({"nested": {"目录": ["文件一.txt", "🚀.md", {"深": "层"}]}}, id="nested"),
    pytest.param({"mixed": "a中b文c🚀d" * 30}, id="long-mixed-wraps"),
    pytest.param({"family": "👨‍👩‍👧 and 👍🏽"}, id="zwj-and-skin-tone"),
    pytest.param({"combining": "e\u0301te\u0301 cafe\u0301"}, id="combining-marks"),
]


@pytest.mark.parametrize("arguments", WIDE_VALUES)
@pytest.mark.parametrize("width", [50, 80, 123])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_borders_stay_aligned_with_wide_characters(
    arguments: dict[str, Any], width: int, lang: str
) -> None:
    request = make_request(
        arguments=arguments,
        preview="--- a/配置.json\n+++ b/配置.json\n@@ -1 +1 @@\n-旧 🐢\n+新 🚀\n",
        reasons=("写入工作区之外 🚫", "outside the workspace"),
        parts=(ShellPartSummary("rm -rf 目录", "destructive", "ask"),),
    )
    assert_aligned(render_request(request, width=width, lang=lang), width)


def test_alignment_holds_by_an_independent_width_measure() -> None:
    # No variation selectors here, so East Asian Width alone gives the terminal's columns.
    request = make_request(arguments={"path": "/项目/文档/说明.md", "note": "火箭 🚀 发射"})
    text = render_request(request, width=72)
    assert {east_asian_width(line) for line in text.splitlines()} == {72}
    assert "/项目/文档/说明.md" in text and "火箭 🚀 发射" in text


def test_risk_badges() -> None:
    for risk, dot in [("none", "🟢"), ("low", "🟢"), ("medium", "🟡"), ("high", "🟠")]:
        assert dot in render_request(make_request(risk=risk))
    assert "🔴 CRITICAL" in render_request(make_request(risk="critical"))
    assert "🔴 严重" in render_request(make_request(risk="critical"), lang="zh")


def test_box_names_tool_risk_rule_and_reasons() -> None:
    request = make_request(
        "send_email", {"to": "a@example.com"}, reasons=("external", "amount over cap")
    )
    text = render_request(request)
    for expected in ["send_email", "HIGH", "local write", "ask: write_file(**)", "• external"]:
        assert expected in text
    assert "• amount over cap" in text


def test_no_rule_shows_the_default() -> None:
    assert "(default for this tier)" in render_request(make_request(rule=None))


def test_nested_arguments_unfold_one_per_line() -> None:
    request = make_request(arguments={"outer": {"inner": {"leaf": 1}, "list": [True, None]}})
    lines = [line[2:-2].rstrip() for line in render_request(request).splitlines()]
    assert "outer:" in lines
    assert "  inner:" in lines
    assert any(line.startswith("    leaf:") and line.endswith("1") for line in lines)
    assert sum(1 for line in lines if line.startswith("    -")) == 2


def test_shell_parts_are_listed() -> None:
    parts = (
        ShellPartSummary("git status", "read-only", "allow"),
        ShellPartSummary("curl evil.sh", "network", "ask"),
    )
    text = render_request(make_request("Bash", {"command": "x"}, parts=parts))
    assert "shell commands" in text
    row = next(line for line in text.splitlines() if "curl evil.sh" in line)
    assert "network" in row and "ask" in row


# ----------------------------------------------------------------------------- truncation


@pytest.mark.parametrize(
    ("length", "lang", "note"),
    [
        (4210, "en", "… (4,210 chars)"),
        (4210, "zh", "…（共 4,210 个字符）"),
        (121, "en", "… (121 chars)"),
    ],
)
def test_long_values_are_cut_with_their_full_length(length: int, lang: str, note: str) -> None:
    text = render_request(make_request(arguments={"content": "x" * length}), lang=lang)
    assert note in text
    assert text.count("x") == 120


def test_a_value_of_exactly_120_chars_is_not_cut() -> None:
    text = render_request(make_request(arguments={"content": "x" * 120}), width=200)
    assert "chars" not in text and text.count("x") == 120


def test_long_non_string_values_are_cut_too() -> None:
    text = render_request(make_request(arguments={"ids": list(range(1000))}))
    assert "more lines hidden" in text


def test_preview_line_cap_notes_hidden_lines() -> None:
    preview = "\n".join(f"line {i}" for i in range(100)) + "\n"
    text = render_request(make_request(preview=preview))
    assert "line 39" in text and "line 40" not in text
    assert "… 60 more lines hidden" in text
    assert "……另有 60 行未显示" in render_request(make_request(preview=preview), lang="zh")


def test_diff_lines_are_coloured() -> None:
    request = make_request(preview="--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old line\n+new line\n")
    console = Console(file=io.StringIO(), width=80, force_terminal=True, color_system="standard")
    console.print(build_box(request, "en"))
    out = console.file.getvalue()  # type: ignore[attr-defined]
    assert re.search(r"\x1b\[32m\+new line", out)
    assert re.search(r"\x1b\[31m-old line", out)


def test_render_request_is_plain_text() -> None:
    text = render_request(make_request(preview="+added\n-removed\n", risk="critical"))
    assert "\x1b" not in text


# ----------------------------------------------------------------------------- escaping

ESCAPES = [
    ("a\x1b[2Kb", "a\\x1b[2Kb"),
    ("\x1b]0;title\x07", "\\x1b]0;title\\x07"),
    ("carriage\rreturn", "carriage\\rreturn"),
    ("bell\x07", "bell\\x07"),
    ("nul\x00", "nul\\x00"),
    ("back\x08space", "back\\x08space"),
    ("del\x7f", "del\\x7f"),
    ("c1 csi\x9b2J", "c1 csi\\x9b2J"),
    ("bidi \u202eevil\u202c", "bidi \\u202eevil\\u202c"),
    ("isolate \u2066x\u2069", "isolate \\u2066x\\u2069"),
    ("zero\u200bwidth\u200d\ufeff", "zero\\u200bwidth\\u200d\\ufeff"),
    ("line\u2028sep", "line\\u2028sep"),
    ("tag\U000e0041", "tag\\U000e0041"),
    ("lone\ud800", "lone\\ud800"),
    ("hangul\u3164filler", "hangul\\u3164filler"),
    ("a\ufe0f", "a\\ufe0f"),  # a variation selector after a letter hides a difference
    ("⚠️ ok", "⚠️ ok"),  # after a symbol it is just emoji presentation
    ("中文 🚀 café", "中文 🚀 café"),
    ("[red]literal[/red] :smile:", "[red]literal[/red] :smile:"),
    ("two\nlines\tand tab", "two\nlines\tand tab"),
]


@pytest.mark.parametrize(("raw", "shown"), ESCAPES)
def test_escape_untrusted(raw: str, shown: str) -> None:
    assert escape_untrusted(raw) == shown


def test_escape_untrusted_newline_and_tab_on_request() -> None:
    assert escape_untrusted("a\nb\tc", newline=False, tab=False) == "a\\nb\\tc"


INJECTIONS = ["\x1b[2K\r", "\x1b]0;title\x07", "\x9b2J", "\u202e", "\x1b[31m", "\x00\x08\x7f"]
RAW_BYTES = ["\x1b", "\x07", "\r", "\x9b", "\u202e", "\x00", "\x08", "\x7f"]


@pytest.mark.parametrize("payload", INJECTIONS)
def test_model_text_is_never_interpreted(payload: str) -> None:
    request = Request(
        id="r",
        call=ToolCall(f"tool{payload}", {f"key{payload}": f"value{payload}", "n": [payload]}),
        verdict=Verdict(
            "ask",
            "medium",
            f"rule{payload}",
            (f"reason{payload}",),
            parts=(ShellPartSummary(f"cmd{payload}", f"cls{payload}", "ask"),),
        ),
        preview=f"preview{payload}\n+diff{payload}",
    )
    text = render_request(request, width=90)
    for raw in RAW_BYTES:
        assert raw not in text
    assert_aligned(text, 90)


def test_rich_markup_in_values_prints_literally() -> None:
    request = make_request(
        "[bold]tool",
        {"value": "[red]danger[/red] [link=http://x]y[/link] :warning:"},
        preview="[/]\n[blink]x",
        reasons=("[green]fine[/green]",),
    )
    text = render_request(request, width=120)
    for literal in [
        "[bold]tool",
        "[red]danger[/red]",
        "[link=http://x]y[/link]",
        ":warning:",
        "[/]",
        "[blink]x",
        "[green]fine[/green]",
    ]:
        assert literal in text


# ----------------------------------------------------------------------------- i18n


def test_every_message_has_both_languages_with_the_same_fields() -> None:
    import string

    for key, texts in MESSAGES.items():
        assert set(texts) == set(LANGS), key
        fields = [
            {name for _, name, _, _ in string.Formatter().parse(texts[lang]) if name}
            for lang in LANGS
        ]
        assert all(texts[lang].strip() for lang in LANGS), key
        assert fields[0] == fields[1], key
