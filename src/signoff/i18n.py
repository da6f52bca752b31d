"""User-facing strings in English and Chinese, keyed by id.

`t(key, lang, **values)` formats one string; `resolve_lang(lang)` picks the language from an
explicit argument, else `SIGNOFF_LANG`, else English. Every key has both languages (a test
checks it), so a missing translation is a test failure, not a blank on screen.

Decision reasons that go back to the model and into the audit log (for example
"no reviewer available") are deliberately *not* here: they stay English and stable.
"""

from __future__ import annotations

import os
from typing import Literal

Lang = Literal["en", "zh"]
LANGS: tuple[Lang, ...] = ("en", "zh")

MESSAGES: dict[str, dict[Lang, str]] = {
    # box
    "title": {"en": "approval needed", "zh": "需要审批"},
    "title_ask": {"en": "the agent asks you", "zh": "智能体向你提问"},
    "tool": {"en": "tool", "zh": "工具"},
    "risk": {"en": "risk", "zh": "风险"},
    "risk_line": {
        "en": "{risk} · tier {tier} · verdict {effect}",
        "zh": "{risk} · 类别 {tier} · 判定 {effect}",
    },
    "rule": {"en": "rule", "zh": "规则"},
    "no_rule": {"en": "(default for this tier)", "zh": "（该类别的默认规则）"},
    "reasons": {"en": "why", "zh": "原因"},
    "request": {"en": "request", "zh": "请求"},
    "expires": {"en": "expires", "zh": "过期时间"},
    "arguments": {"en": "arguments", "zh": "参数"},
    "no_arguments": {"en": "(none)", "zh": "（无）"},
    "preview": {"en": "preview", "zh": "预览"},
    "parts": {"en": "shell commands", "zh": "Shell 命令"},
    "part_head_command": {"en": "command", "zh": "命令"},
    "part_head_class": {"en": "class", "zh": "类别"},
    "part_head_effect": {"en": "verdict", "zh": "判定"},
    "question": {"en": "question", "zh": "问题"},
    "options": {"en": "options", "zh": "选项"},
    "chars": {"en": "… ({n} chars)", "zh": "…（共 {n} 个字符）"},
    "lines_hidden": {"en": "… {n} more lines hidden", "zh": "……另有 {n} 行未显示"},
    # risk, tier and effect names
    "risk_none": {"en": "🟢 NONE", "zh": "🟢 无风险"},
    "risk_low": {"en": "🟢 LOW", "zh": "🟢 低危"},
    "risk_medium": {"en": "🟡 MEDIUM", "zh": "🟡 中危"},
    "risk_high": {"en": "🟠 HIGH", "zh": "🟠 高危"},
    "risk_critical": {"en": "🔴 CRITICAL", "zh": "🔴 严重"},
    "tier_read": {"en": "read-only", "zh": "只读"},
    "tier_write": {"en": "local write", "zh": "本地写入"},
    "tier_destructive": {"en": "destructive", "zh": "破坏性"},
    "tier_external": {"en": "external", "zh": "外部"},
    "tier_privileged": {"en": "privileged", "zh": "特权"},
    "tier_unknown": {"en": "unknown tool", "zh": "未知工具"},
    "effect_allow": {"en": "allow", "zh": "允许"},
    "effect_notify": {"en": "notify", "zh": "通知"},
    "effect_ask": {"en": "ask", "zh": "询问"},
    "effect_deny": {"en": "deny", "zh": "拒绝"},
    # menu and dialogs
    "menu": {
        "en": "[y] approve  [a] always  [n] reject  [s] skip  [e] edit  [q] stop  [?] help",
        "zh": "[y] 批准  [a] 总是允许  [n] 拒绝  [s] 跳过  [e] 修改参数  [q] 停止  [?] 帮助",
    },
    "enter_decides_nothing": {
        "en": "Enter alone decides nothing: type y to approve, n to reject, ? for help.",
        "zh": "仅按回车不会做出任何决定：输入 y 批准，n 拒绝，? 查看帮助。",
    },
    "menu_ask": {
        "en": "Type your answer{pick} and press Enter.  /s skip  /n reject  /q stop  /? help",
        "zh": "输入你的回答{pick}后按回车。  /s 跳过  /n 拒绝  /q 停止  /? 帮助",
    },
    "menu_ask_pick": {"en": " (or an option number)", "zh": "（或选项编号）"},
    "help": {
        "en": (
            "y           approve this exact call once (Enter alone decides nothing)\n"
            "a           approve and remember a rule (you see the rule first)\n"
            "n           reject; you give a reason, which goes back to the agent\n"
            "s           skip this call; the agent is told it did not run\n"
            "e           edit the arguments as JSON ($VISUAL or $EDITOR if set); they are\n"
            "            judged again and shown before you approve them\n"
            "q           stop the agent; this call stays undecided\n"
            "?           this help\n"
            "Keys typed before the box appeared are ignored.\n"
            "Five unreadable answers in a row reject the call. Ctrl-C rejects it;\n"
            "a second Ctrl-C stops the agent."
        ),
        "zh": (
            "y          仅批准这一次调用（仅按回车不会做出决定）\n"
            "a          批准并记住一条规则（先显示规则）\n"
            "n          拒绝；需填写原因，原因会返回给智能体\n"
            "s          跳过此调用；智能体会得知它未执行\n"
            "e          以 JSON 修改参数（若设置了 $VISUAL 或 $EDITOR 则用编辑器）；\n"
            "           修改后会重新判定并显示，再由你批准\n"
            "q          停止智能体；此调用保持未决定\n"
            "?          显示本帮助\n"
            "在审批框出现之前输入的按键会被忽略。\n"
            "连续五次无法识别的输入将拒绝此调用。按 Ctrl-C 会拒绝此调用；\n"
            "再按一次 Ctrl-C 则停止智能体。"
        ),
    },
    "help_ask": {
        "en": (
            "Type your answer and press Enter; it is returned to the agent as the result.\n"
            "A number picks the option with that number.\n"
            "/s skips the question, /n rejects it (you give a reason), /q stops the agent\n"
            "(the question stays unanswered), /? shows this help."
        ),
        "zh": (
            "输入回答并按回车，回答将作为结果返回给智能体。\n"
            "输入数字可选择对应编号的选项。\n"
            "/s 跳过问题，/n 拒绝（需填写原因），/q 停止智能体（问题保持未回答），\n"
            "/? 显示本帮助。"
        ),
    },
    "unreadable": {
        "en": "Unrecognised answer {answer}; type ? for help.",
        "zh": "无法识别的输入 {answer}；输入 ? 查看帮助。",
    },
    "tries_left": {"en": "({left} tries left)", "zh": "（还剩 {left} 次）"},
    "bad_option": {
        "en": "There is no option {n}; pick 1 to {max} or type an answer.",
        "zh": "没有编号为 {n} 的选项；请选择 1 到 {max}，或直接输入回答。",
    },
    "empty_answer": {"en": "The answer is empty.", "zh": "回答为空。"},
    "always_show": {
        "en": "This will save the rule {rule} with scope {scope}.",
        "zh": "将保存规则 {rule}，作用范围 {scope}。",
    },
    "always_none": {
        "en": "No rule can be remembered for this call; approve it once with y instead.",
        "zh": "此调用无法记住规则；请改用 y 仅批准一次。",
    },
    "always_confirm": {"en": "Save it and approve? [y/N] ", "zh": "保存并批准？[y/N] "},
    "always_rule": {
        "en": "This will save the rule {rule}. Remember it for:",
        "zh": "将保存规则 {rule}。作用范围：",
    },
    "always_pick": {
        "en": "Type 1-{n} to save it for that scope and approve (Enter cancels): ",
        "zh": "输入 1-{n} 按该范围保存并批准（回车取消）：",
    },
    "cancelled": {"en": "Cancelled; back to the menu.", "zh": "已取消，返回菜单。"},
    "scope_run": {"en": "this run", "zh": "本次运行"},
    "scope_session": {"en": "this session", "zh": "本次会话"},
    "scope_project": {
        "en": "this project (.signoff/settings.local.toml)",
        "zh": "本项目（.signoff/settings.local.toml）",
    },
    "scope_pattern": {"en": "a pattern", "zh": "匹配模式"},
    "reason_prompt": {
        "en": "Reason (required; the agent will read it): ",
        "zh": "拒绝原因（必填，智能体会看到）：",
    },
    "reason_required": {"en": "A reason is required.", "zh": "必须填写原因。"},
    "edit_intro": {
        "en": "Current arguments:",
        "zh": "当前参数：",
    },
    "edit_prompt": {
        "en": "Enter new arguments as one JSON object; finish with a blank line "
        "(a blank line first cancels):",
        "zh": "请输入新的参数（一个 JSON 对象），以空行结束（直接输入空行则取消）：",
    },
    "edit_new_box": {
        "en": "The edited call, judged again; this is what will run:",
        "zh": "修改后的调用（已重新判定），将按此执行：",
    },
    "edit_confirm": {"en": "Approve the edited call? [y/N] ", "zh": "批准修改后的调用？[y/N] "},
    "edit_schema": {"en": "Expected fields: {fields}", "zh": "应包含字段：{fields}"},
    "edit_bad_json": {"en": "Not valid JSON: {error}", "zh": "不是有效的 JSON：{error}"},
    "edit_not_object": {
        "en": "The arguments must be a JSON object ({...}).",
        "zh": "参数必须是 JSON 对象（{...}）。",
    },
    "edit_too_long": {
        "en": "The input is too long; start again.",
        "zh": "输入过长，请重新输入。",
    },
    "edit_invalid": {
        "en": "These arguments are not accepted: {error}",
        "zh": "修改后的参数未通过检查：{error}",
    },
    "edit_again": {
        "en": "[e] edit again  [Enter] back to the menu: ",
        "zh": "[e] 重新修改  [回车] 返回菜单：",
    },
    "edit_unchanged": {
        "en": "The arguments are unchanged; back to the menu.",
        "zh": "参数未改变，返回菜单。",
    },
    "edit_opening": {
        "en": "Opening {editor}; save and quit to continue (an empty file cancels).",
        "zh": "正在打开 {editor}；保存并退出后继续（清空文件则取消）。",
    },
    "edit_no_editor": {
        "en": "The editor did not run ({error}); type the JSON here instead.",
        "zh": "编辑器未能运行（{error}）；请在此处输入 JSON。",
    },
    "edit_retry": {
        "en": "Try again, or enter a blank line to go back to the menu.",
        "zh": "请重试，或输入空行返回菜单。",
    },
    "no_reviewer": {
        "en": "No reviewer available: the call is rejected.",
        "zh": "没有可用的审批人：此调用已被拒绝。",
    },
    "too_many_unreadable": {
        "en": "Five unreadable answers in a row: the call is rejected.",
        "zh": "连续五次无法识别的输入：此调用已被拒绝。",
    },
    "too_many_lines": {
        "en": "Too many answers without a decision: the call is rejected.",
        "zh": "输入次数过多仍未做出决定：此调用已被拒绝。",
    },
    "interrupted": {
        "en": "Interrupted: the call is rejected.",
        "zh": "已中断：此调用已被拒绝。",
    },
    "interrupted_prompt": {
        "en": "[Ctrl-C or q] stop the agent  [Enter] let it go on without this call: ",
        "zh": "[Ctrl-C 或 q] 停止智能体  [回车] 不执行此调用，让它继续：",
    },
    "stopping": {
        "en": "Stopping the agent; this call stays undecided.",
        "zh": "正在停止智能体；此调用保持未决定。",
    },
    "decided_approve": {"en": "Approved.", "zh": "已批准。"},
    "decided_approve_always": {"en": "Approved; rule saved.", "zh": "已批准，规则已保存。"},
    "decided_reject": {"en": "Rejected.", "zh": "已拒绝。"},
    "decided_skip": {"en": "Skipped.", "zh": "已跳过。"},
    "decided_edit": {"en": "Edited arguments accepted.", "zh": "已接受修改后的参数。"},
    "decided_respond": {"en": "Answer sent.", "zh": "回答已发送。"},
}


def resolve_lang(lang: str | None = None) -> Lang:
    """`lang` if given, else `SIGNOFF_LANG`; anything starting with "zh" is Chinese."""
    chosen = lang if lang is not None else os.environ.get("SIGNOFF_LANG", "")
    return "zh" if chosen.strip().lower().startswith("zh") else "en"


def t(key: str, lang: Lang, **values: object) -> str:
    """The string `key` in `lang`, with `{name}` fields filled from `values`."""
    text = MESSAGES[key][lang]
    return text.format(**values) if values else text


def plural(count: int, noun: str, many: str | None = None) -> str:
    """ "1 change", "2 changes", "0 changes": the count with its noun in the right number
    (English; `many` when the plural is not the noun plus "s")."""
    return f"{count:,} {noun if count == 1 else (many or noun + 's')}"


__all__ = ["LANGS", "MESSAGES", "Lang", "plural", "resolve_lang", "t"]
