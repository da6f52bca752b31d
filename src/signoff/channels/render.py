"""Pure rendering of a request as a rich box, and the escaping of untrusted text.

Everything the model wrote (tool name, arguments, preview, reasons) goes through
`escape_untrusted` and is placed in `rich.text.Text` objects, never in markup strings: a
`[red]` in a value prints literally and an ESC byte prints as the four characters `\\x1b`.
Widths come from rich's cell measurement (CJK and emoji are two columns), so the borders
line up whatever the values contain.
"""

from __future__ import annotations

import io
import json
from collections.abc import Mapping
from typing import Any

from rich import box
from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from ..escape import escape_json_text, escape_untrusted, safe_json
from ..i18n import Lang, resolve_lang, t
from ..models import Request
from ..times import relative, when

VALUE_LIMIT = 120  # characters of one argument value shown before it is cut
PREVIEW_LINES = 40  # lines of preview shown before the rest is hidden
PREVIEW_LINE_LIMIT = 400  # characters of one preview line shown before it is cut
ARGUMENT_LINES = 60  # lines of unfolded arguments shown before the rest is hidden
DEFAULT_WIDTH = 100
MAX_BOX_WIDTH = 120  # on a very wide terminal a full-width box is hard to read

RISK_STYLE: dict[str, str] = {
    "none": "bold green",
    "low": "bold green",
    "medium": "bold yellow",
    "high": "bold dark_orange",
    "critical": "bold white on red",
}


def cut(text: str, limit: int, lang: Lang) -> tuple[str, str]:
    """`text` cut to `limit` characters, and the note to add ("… (4,210 chars)") or ""."""
    if len(text) <= limit:
        return text, ""
    return text[:limit], t("chars", lang, n=f"{len(text):,}")


def _scalar(value: Any, lang: Lang) -> Text:
    """One JSON scalar as it appears after "key: ", escaped and cut."""
    if isinstance(value, str):
        shown, note = cut(value, VALUE_LIMIT, lang)
        text = Text('"' + escape_untrusted(shown, newline=False, tab=False) + '"')
    else:
        raw = json.dumps(value, ensure_ascii=False)
        shown, note = cut(raw, VALUE_LIMIT, lang)
        text = Text(escape_untrusted(shown, newline=False, tab=False), style="cyan")
    if note:
        text.append(" " + note, style="dim italic")
    return text


# What a call is read by, shown before the rest of its arguments: a shell call's command,
# never the agent's description of it (tests/test_command_first.py).
SHOWN_FIRST = ("command",)


def command_first(arguments: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments in the order a person reads them: the command first, then the rest
    as they came."""
    first = {key: arguments[key] for key in SHOWN_FIRST if key in arguments}
    return {**first, **{k: v for k, v in arguments.items() if k not in first}}


def argument_rows(arguments: Mapping[str, Any], lang: Lang) -> list[tuple[Text, Text]]:
    """Arguments one per row as (key, value); nested objects and lists unfolded with
    indentation in the key column, so a long value wraps under itself, not under the key."""
    rows: list[tuple[Text, Text]] = []

    def walk(value: Any, label: Text, depth: int) -> None:
        label = Text("  " * depth) + label
        if isinstance(value, Mapping) and value:
            rows.append((label, Text()))
            for key, item in value.items():
                walk(item, _key(str(key)), depth + 1)
        elif isinstance(value, list | tuple) and value:
            rows.append((label, Text()))
            for item in value:
                walk(item, Text("-", style="dim"), depth + 1)
        elif isinstance(value, Mapping):
            rows.append((label, Text("{}", style="cyan")))
        elif isinstance(value, list | tuple):
            rows.append((label, Text("[]", style="cyan")))
        else:
            rows.append((label, _scalar(value, lang)))

    for key, value in command_first(arguments).items():  # a shell call: its command first
        walk(value, _key(str(key)), 0)
    if not rows:
        rows.append((Text(t("no_arguments", lang), style="dim"), Text()))
    if len(rows) > ARGUMENT_LINES:
        hidden = len(rows) - ARGUMENT_LINES
        rows = [
            *rows[:ARGUMENT_LINES],
            (Text(t("lines_hidden", lang, n=hidden), style="dim"), Text()),
        ]
    return rows


def _arguments_grid(arguments: Mapping[str, Any], lang: Lang, width: int) -> Table:
    grid = Table.grid(padding=(0, 1))
    # Keys are model-written too: cap their column so a huge key cannot squeeze the values.
    grid.add_column(overflow="fold", max_width=max(12, width // 3))
    grid.add_column(overflow="fold")
    for key, value in argument_rows(arguments, lang):
        grid.add_row(key, value)
    return grid


def _key(name: str) -> Text:
    return Text(escape_untrusted(name, newline=False, tab=False) + ":", style="bold")


def _looks_like_diff(lines: list[str]) -> bool:
    return any(line.startswith(("@@", "--- ", "+++ ", "diff --git")) for line in lines[:20])


def preview_lines(preview: str, lang: Lang, limit: int = PREVIEW_LINES) -> list[Text]:
    """The preview with a line cap; a unified diff gets +/- colours."""
    raw = preview.split("\n")
    if raw and raw[-1] == "":
        raw.pop()  # a trailing newline is not an extra line
    is_diff = _looks_like_diff(raw)
    lines: list[Text] = []
    for line in raw[:limit]:
        shown, note = cut(line, PREVIEW_LINE_LIMIT, lang)
        # Tabs become spaces: a tab inside a table cell has no stable width.
        text = Text(escape_untrusted(shown, newline=False).expandtabs(4))
        if is_diff:
            if line.startswith(("+++", "---")):
                text.stylize("bold")
            elif line.startswith("+"):
                text.stylize("green")
            elif line.startswith("-"):
                text.stylize("red")
            elif line.startswith("@@"):
                text.stylize("cyan")
        if note:
            text.append(" " + note, style="dim italic")
        lines.append(text)
    if len(raw) > limit:
        lines.append(Text(t("lines_hidden", lang, n=len(raw) - limit), style="dim"))
    return lines


def _lines(items: list[Text]) -> Text:
    return Text("\n").join(items)


def _facts(rows: list[tuple[str, Text]]) -> Table:
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column(overflow="fold")
    for label, value in rows:
        grid.add_row(Text(label, style="bold"), value)
    return grid


def _section(title: str, body: RenderableType) -> Group:
    return Group(Text(title, style="bold underline"), body)


def is_question(request: Request) -> bool:
    return request.call.name == "ask_human"


def question_parts(request: Request) -> tuple[str, list[str]]:
    """The question and its options from an `ask_human` call (tolerant of odd shapes)."""
    args = request.call.arguments
    question = args.get("question", "")
    options = args.get("options") or []
    if not isinstance(options, list | tuple):
        options = [options]
    return str(question), [o if isinstance(o, str) else json.dumps(o) for o in options]


def build_box(
    request: Request,
    lang: Lang,
    *,
    width: int = DEFAULT_WIDTH,
    preview_limit: int = PREVIEW_LINES,
    now: float | None = None,
) -> Table:
    """The approval box as a rich renderable (`now`: the time the expiry is counted from)."""
    verdict = request.verdict
    call = request.call
    risk_key = f"risk_{verdict.risk}"
    header = Text(t(risk_key, lang), style=RISK_STYLE.get(verdict.risk, "bold"))
    header.append("  ")
    header.append(t("title_ask" if is_question(request) else "title", lang), style="bold")

    table = Table(box=box.ROUNDED, show_header=False, width=width, padding=(0, 1))
    table.add_column(overflow="fold")
    table.add_row(header, end_section=True)

    risk_line = t(
        "risk_line",
        lang,
        risk=t(risk_key, lang).split(" ", 1)[-1],  # the word without the coloured dot
        tier=_name("tier", verdict.tier, lang),
        effect=_name("effect", verdict.effect, lang),
    )
    rule = Text(escape_untrusted(verdict.rule, newline=False) if verdict.rule else "")
    if not verdict.rule:
        rule = Text(t("no_rule", lang), style="dim")
    facts: list[tuple[str, Text]] = [
        (t("tool", lang), Text(escape_untrusted(call.name, newline=False), style="bold")),
        (t("risk", lang), Text(risk_line, style=RISK_STYLE.get(verdict.risk, ""))),
        (t("rule", lang), rule),
    ]
    if verdict.reasons:
        reasons = [Text("• " + escape_untrusted(r, newline=False)) for r in verdict.reasons]
        facts.append((t("reasons", lang), _lines(reasons)))
    if request.id:
        facts.append((t("request", lang), Text(escape_untrusted(request.id), style="dim")))
    if request.expires_at:
        # The zone is named (the web and the CLI say UTC too) and the time left is spelled
        # out, so nobody has to know which zone the agent's machine runs in.
        expiry = f"{when(request.expires_at)} ({relative(request.expires_at, now)})"
        facts.append((t("expires", lang), Text(expiry, style="dim")))
    table.add_row(_facts(facts), end_section=True)

    if is_question(request):
        question, options = question_parts(request)
        table.add_row(
            _section(t("question", lang), Text(escape_untrusted(question).expandtabs(4))),
            end_section=True,
        )
        if options:
            numbered = [
                Text(f"{i}. ") + Text(escape_untrusted(option, newline=False))
                for i, option in enumerate(options, 1)
            ]
            table.add_row(_section(t("options", lang), _lines(numbered)), end_section=True)
        return table

    table.add_row(
        _section(t("arguments", lang), _arguments_grid(call.arguments, lang, width)),
        end_section=True,
    )
    if request.preview:
        body = _lines(preview_lines(request.preview, lang, preview_limit))
        table.add_row(_section(t("preview", lang), body), end_section=True)
    if verdict.parts:
        parts = Table(box=None, padding=(0, 2, 0, 0), show_edge=False)
        parts.add_column(t("part_head_command", lang), overflow="fold", ratio=3)
        parts.add_column(t("part_head_class", lang), overflow="fold", ratio=1)
        parts.add_column(t("part_head_effect", lang), overflow="fold", ratio=1)
        for part in verdict.parts:
            parts.add_row(
                Text(escape_untrusted(part.command, newline=False)),
                Text(escape_untrusted(part.cls, newline=False)),
                Text(_name("effect", part.effect, lang), style=_effect_style(part.effect)),
            )
        table.add_row(_section(t("parts", lang), parts), end_section=True)
    return table


def _name(group: str, value: str, lang: Lang) -> str:
    key = f"{group}_{value}"
    try:
        return t(key, lang)
    except KeyError:
        return escape_untrusted(value, newline=False)


def _effect_style(effect: str) -> str:
    return {"allow": "green", "notify": "cyan", "ask": "yellow", "deny": "bold red"}.get(effect, "")


def plain_console(width: int) -> Console:
    """A console that writes plain text (no ANSI at all) into a string buffer."""
    return Console(
        file=io.StringIO(),
        width=width,
        color_system=None,
        force_terminal=False,
        force_interactive=False,
        highlight=False,
        markup=False,
        emoji=False,
        legacy_windows=False,
        soft_wrap=False,
    )


def render_request(
    request: Request,
    *,
    width: int = DEFAULT_WIDTH,
    lang: str | None = None,
    preview_limit: int = PREVIEW_LINES,
    now: float | None = None,
) -> str:
    """The approval box as plain text (no ANSI), for `signoff show` and tests."""
    console = plain_console(width)
    box_ = build_box(request, resolve_lang(lang), width=width, preview_limit=preview_limit, now=now)
    console.print(box_)
    out = console.file
    assert isinstance(out, io.StringIO)
    return out.getvalue()


__all__ = [
    "DEFAULT_WIDTH",
    "MAX_BOX_WIDTH",
    "PREVIEW_LINES",
    "VALUE_LIMIT",
    "argument_rows",
    "build_box",
    "command_first",
    "cut",
    "escape_json_text",
    "escape_untrusted",
    "is_question",
    "plain_console",
    "preview_lines",
    "question_parts",
    "render_request",
    "safe_json",
]
