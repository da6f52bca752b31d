"""Strings of the web inbox in English and Chinese (every key has both; a test checks)."""

from __future__ import annotations

from ..i18n import Lang

WEB: dict[str, dict[Lang, str]] = {
    "inbox": {"en": "Inbox", "zh": "收件箱"},
    "needs_action": {"en": "Needs action", "zh": "待处理"},
    "all_requests": {"en": "All requests", "zh": "全部请求"},
    "grants": {"en": "Grants", "zh": "授权"},
    "reviews": {"en": "Review after", "zh": "事后审查"},
    "runs": {"en": "Runs", "zh": "运行"},
    "login": {"en": "Sign in", "zh": "登录"},
    "logout": {"en": "Sign out", "zh": "退出"},
    "token": {"en": "Access token", "zh": "访问令牌"},
    "bad_token": {"en": "That token is not valid.", "zh": "令牌无效。"},
    "hook_token": {
        "en": "That token is a hook's (role hook): it posts a coding agent's hook events "
        "and cannot sign in.",
        "zh": "这是钩子的令牌（角色 hook）：它只用于发送编码代理的钩子事件，不能登录。",
    },
    "signed_in_as": {"en": "Signed in as", "zh": "当前用户"},
    "login_intro": {
        "en": "Paste your access token to sign in.",
        "zh": "粘贴你的访问令牌以登录。",
    },
    "login_help": {
        "en": "No token yet? Whoever runs this server creates one on its machine with "
        "`signoff users add NAME --role approver`, which prints the token once.",
        "zh": "还没有令牌？由运行此服务器的人在服务器所在机器上执行 "
        "`signoff users add NAME --role approver` 创建，令牌只显示一次。",
    },
    "local_ended": {
        "en": "Local mode has ended: an account was added, so this inbox now asks everyone "
        "for a token, you too. Use the token that `signoff users add` printed; "
        "`signoff users add YOURNAME --role admin` makes one for you.",
        "zh": "本地模式已结束：已添加账户，此收件箱现在要求每个人（包括你）提供令牌。"
        "请使用 `signoff users add` 打印的令牌；`signoff users add YOURNAME --role admin` "
        "可为你创建一个。",
    },
    "empty": {"en": "Nothing waits for a decision.", "zh": "没有待决定的请求。"},
    "filter": {"en": "Filter", "zh": "筛选"},
    "any": {"en": "any", "zh": "全部"},
    "risk": {"en": "Risk", "zh": "风险"},
    "tool": {"en": "Tool", "zh": "工具"},
    "run": {"en": "Run", "zh": "运行"},
    "tenant": {"en": "Tenant", "zh": "租户"},
    "state": {"en": "State", "zh": "状态"},
    "age": {"en": "Created", "zh": "创建时间"},
    "expires": {"en": "Expires", "zh": "过期时间"},
    "call": {"en": "Exact call", "zh": "确切调用"},
    "cut_note": {
        "en": "The arguments are too long to show whole here; only their start is shown.",
        "zh": "参数过长，此处仅显示开头部分。",
    },
    "raw": {"en": "See the whole request (raw JSON)", "zh": "查看完整请求（原始 JSON）"},
    "raw_download": {"en": "download it", "zh": "下载"},
    "edit_too_large": {
        "en": "These arguments are too large to edit here: download them, "
        "then edit with signoff edit ID --args or the API.",
        "zh": "参数过大，无法在此修改：请下载后用 signoff edit ID --args 或 API 修改。",
    },
    "arguments": {"en": "Arguments", "zh": "参数"},
    "preview": {"en": "What will happen", "zh": "将会发生什么"},
    "shell_parts": {"en": "Shell analysis", "zh": "Shell 分析"},
    "rule": {"en": "Rule", "zh": "规则"},
    "no_rule": {"en": "(default for this tier)", "zh": "（该类别的默认规则）"},
    "reasons": {"en": "Why it asks", "zh": "询问原因"},
    "intent": {"en": "The agent says", "zh": "智能体的说明"},
    "history": {"en": "Run history", "zh": "运行记录"},
    "approvers": {"en": "Who may decide", "zh": "可决定者"},
    "anyone": {"en": "any approver", "zh": "任何审批人"},
    "approve": {"en": "Approve", "zh": "批准"},
    "approve_always": {"en": "Approve always", "zh": "始终批准"},
    "always_rule": {"en": "Will remember the rule", "zh": "将记住规则"},
    "scope": {"en": "for", "zh": "范围"},
    "scope_run": {"en": "this run", "zh": "本次运行"},
    "scope_project": {"en": "this project", "zh": "本项目"},
    "no_always": {
        "en": "No narrow rule can be remembered for this call.",
        "zh": "此调用无法记住一条精确规则。",
    },
    "edit": {"en": "Edit", "zh": "编辑"},
    "edit_help": {
        "en": "New arguments (a JSON object); the policy judges them again.",
        "zh": "新参数（JSON 对象）；策略会重新判定。",
    },
    "save_edit": {"en": "Approve edited call", "zh": "批准编辑后的调用"},
    "reject": {"en": "Reject", "zh": "拒绝"},
    "reason": {"en": "Reason (goes back to the model)", "zh": "原因（会告知模型）"},
    "skip": {"en": "Skip", "zh": "跳过"},
    "answer": {"en": "Answer", "zh": "回答"},
    "answer_help": {
        "en": "Your answer becomes the tool's result.",
        "zh": "你的回答将作为工具结果。",
    },
    "already": {"en": "Already {state} by {actor}", "zh": "已被 {actor} {state}"},
    "decided_by_you": {
        "en": "Decided by you ({actor}): {label}",
        "zh": "由你（{actor}）决定：{label}",
    },
    "label_approve": {"en": "approved", "zh": "批准"},
    "label_approve_always": {"en": "approved always", "zh": "始终批准"},
    "label_edit": {"en": "approved with an edit", "zh": "编辑后批准"},
    "label_edit_refused": {
        "en": "edited (the policy refused the edit)",
        "zh": "编辑（编辑后的调用被策略拒绝）",
    },
    "label_reject": {"en": "rejected", "zh": "拒绝"},
    "label_skip": {"en": "skipped", "zh": "跳过"},
    "label_respond": {"en": "answered", "zh": "回答"},
    "done_approve": {"en": "Approved.", "zh": "已批准。"},
    "done_approve_always": {
        "en": "Approved, and the rule is remembered.",
        "zh": "已批准，并记住了这条规则。",
    },
    "done_edit": {"en": "Approved with your edit.", "zh": "已按你的编辑批准。"},
    "done_edit_refused": {
        "en": "The policy refused your edit: the call will not run, and the model is told why.",
        "zh": "策略拒绝了你的编辑：该调用不会执行，模型会被告知原因。",
    },
    "done_reject": {
        "en": "Rejected: the call will not run, and the model is told your reason.",
        "zh": "已拒绝：该调用不会执行，模型会收到你的理由。",
    },
    "done_skip": {"en": "Skipped: the call will not run.", "zh": "已跳过：该调用不会执行。"},
    "done_respond": {
        "en": "Answered: your answer goes back to the model.",
        "zh": "已回答：你的回答会交给模型。",
    },
    "done_revoked": {
        "en": "Revoked: what the grant allowed asks again.",
        "zh": "已撤销：该授权允许的调用会重新询问。",
    },
    "done_reverted": {
        "en": "Reverted: the files are back as they were before that change.",
        "zh": "已还原：文件恢复到该改动之前的样子。",
    },
    "done_tail_worker": {
        "en": "The run continues: this server resumes it now.",
        "zh": "运行继续：本服务器正在恢复它。",
    },
    "done_tail_manual": {
        "en": "The run moves on once it is resumed (see below).",
        "zh": "运行恢复后才会继续（见下文）。",
    },
    "pick_option": {"en": "Pick an answer:", "zh": "选择一个回答："},
    "answer_own": {
        "en": "Or write your own answer (it becomes the tool's result):",
        "zh": "或写下你自己的回答（它将作为工具结果）：",
    },
    "run_paused_here": {"en": "paused, waiting on this decision", "zh": "已暂停，等待此决定"},
    "run_waiting": {
        "en": "paused, waiting on another decision:",
        "zh": "已暂停，等待另一个决定：",
    },
    "run_resuming": {
        "en": "resuming: this server's worker picks it up now",
        "zh": "正在恢复：本服务器的 worker 正在处理",
    },
    "run_running": {"en": "running", "zh": "运行中"},
    "run_cannot_resume": {
        "en": "ready, but this server cannot resume it:",
        "zh": "可以继续，但本服务器无法恢复它：",
    },
    "run_ready": {"en": "ready to go on, once resumed", "zh": "可以继续，等待恢复"},
    "run_ready_how": {
        "en": "This server does not resume runs (`signoff serve --no-worker`). "
        "Resume this run, or start a worker that resumes every run of this store:",
        "zh": "本服务器不恢复运行（`signoff serve --no-worker`）。请恢复此运行，"
        "或启动一个 worker 恢复此存储的所有运行：",
    },
    "run_resume_elsewhere": {
        "en": "This server tries again when its hold on the run lapses (5 minutes). To "
        "resume it elsewhere sooner, stop this server (that lets the run go), then, where "
        "its agent imports:",
        "zh": "本服务器对该运行的占用到期（5 分钟）后会再试。要更早在别处恢复它，请先停止"
        "本服务器（这会释放该运行），然后在能导入其智能体的地方运行：",
    },
    "run_finished": {"en": "finished", "zh": "已完成"},
    "run_failed": {"en": "failed", "zh": "失败"},
    "run_needs_attention": {"en": "stopped: it needs a person", "zh": "已停止：需要人工处理"},
    "after_decision": {"en": "What happened next", "zh": "之后发生了什么"},
    "step_assistant": {"en": "The model", "zh": "模型"},
    "step_tool": {"en": "Tool result", "zh": "工具结果"},
    "expired_card": {
        "en": "Expired at {at} without a decision; it can no longer be approved.",
        "zh": "已于 {at} 过期且未决定；不能再批准。",
    },
    "original": {"en": "Original arguments", "zh": "原始参数"},
    "edited": {"en": "Edited arguments", "zh": "编辑后的参数"},
    "outcome": {"en": "Result", "zh": "结果"},
    "deliveries": {"en": "Notifications", "zh": "通知"},
    "viewer_note": {"en": "You can view but not decide.", "zh": "你只能查看，不能决定。"},
    "revoke": {"en": "Revoke", "zh": "撤销"},
    "no_grants": {"en": "No grants.", "zh": "没有授权。"},
    "created_by": {"en": "Created by", "zh": "创建者"},
    "revert": {"en": "Revert", "zh": "还原"},
    "reverted": {"en": "Reverted", "zh": "已还原"},
    "no_reviews": {"en": "Nothing to review.", "zh": "没有需要审查的内容。"},
    "files": {"en": "Files", "zh": "文件"},
    "keys_inbox": {"en": "Keys: j/k move · Enter open", "zh": "快捷键：j/k 移动 · Enter 打开"},
    "keys_request": {
        "en": "Keys: a approve · r reject · e edit · s skip",
        "zh": "快捷键：a 批准 · r 拒绝 · e 编辑 · s 跳过",
    },
    "live": {"en": "live", "zh": "实时"},
    "error": {"en": "Error", "zh": "错误"},
    "back": {"en": "Back to the inbox", "zh": "返回收件箱"},
    "risk_none": {"en": "none", "zh": "无"},
    "risk_low": {"en": "low", "zh": "低"},
    "risk_medium": {"en": "medium", "zh": "中"},
    "risk_high": {"en": "high", "zh": "高"},
    "risk_critical": {"en": "critical", "zh": "严重"},
    "state_pending": {"en": "pending", "zh": "待决定"},
    "state_approved": {"en": "approved", "zh": "已批准"},
    "state_claimed": {"en": "running", "zh": "执行中"},
    "state_finished": {"en": "finished", "zh": "已完成"},
    "state_failed": {"en": "failed", "zh": "失败"},
    "state_rejected": {"en": "rejected", "zh": "已拒绝"},
    "state_skipped": {"en": "skipped", "zh": "已跳过"},
    "state_answered": {"en": "answered", "zh": "已回答"},
    "state_expired": {"en": "expired", "zh": "已过期"},
    "state_in_doubt": {"en": "in doubt", "zh": "状态不明"},
    "stats": {"en": "Statistics", "zh": "统计"},
    "audit": {"en": "Audit log", "zh": "审计日志"},
    "audit_trail": {"en": "This request in the audit log", "zh": "此请求的审计记录"},
    "allow_in_project": {
        "en": "Allow it in this project (admin)",
        "zh": "在本项目中允许（管理员）",
    },
    "kind": {"en": "Kind", "zh": "类型"},
    "time": {"en": "Time", "zh": "时间"},
    "actor": {"en": "Who", "zh": "操作者"},
    "what": {"en": "What", "zh": "内容"},
    "verify_chain": {"en": "Verify the chain", "zh": "校验哈希链"},
    "chain_ok": {"en": "{n} entries verified; chain head", "zh": "已校验 {n} 条记录；链头"},
    "chain_bad": {"en": "TAMPERED: first bad entry {seq}", "zh": "已被篡改：第一条错误记录 {seq}"},
    "no_entries": {"en": "No audit entries match.", "zh": "没有匹配的审计记录。"},
    "all_time": {"en": "all time", "zh": "全部时间"},
    "since_label": {"en": "since {since}", "zh": "自 {since} 起"},
    "since": {"en": "Since", "zh": "起始"},
    "since_help": {
        "en": "7d, 12h, 30m, an ISO date or epoch seconds",
        "zh": "7d、12h、30m、ISO 日期或纪元秒数",
    },
    "figures": {"en": "Figures", "zh": "数据"},
    "calls_judged": {"en": "Calls judged", "zh": "判定的调用"},
    "effects_line": {
        "en": "allow {allow} · notify {notify} · ask {ask} · deny {deny}",
        "zh": "允许 {allow} · 通知 {notify} · 询问 {ask} · 禁止 {deny}",
    },
    "ask_share": {"en": "Share of calls that asked", "zh": "需要询问的调用比例"},
    "asked_of": {"en": "{asked} of {calls} calls", "zh": "{calls} 次调用中的 {asked} 次"},
    "qpr": {"en": "Questions per run (mean)", "zh": "每次运行的提问数（平均）"},
    "qpr_line": {
        "en": "median {median} · max {max} · {runs} runs",
        "zh": "中位数 {median} · 最多 {max} · 共 {runs} 次运行",
    },
    "ttd": {"en": "Time to decision (median)", "zh": "决定用时（中位数）"},
    "ttd_line": {"en": "p90 {p90} · {count} decisions", "zh": "p90 {p90} · 共 {count} 个决定"},
    "expired_n": {"en": "Expired", "zh": "已过期"},
    "in_doubt_n": {"en": "In doubt", "zh": "状态不明"},
    "unresolved_line": {"en": "{n} unresolved", "zh": "{n} 个未解决"},
    "outcome_unknown_n": {"en": "Outcome unknown (in doubt)", "zh": "结果未知（状态不明）"},
    "outcome_unknown_line": {
        "en": "allowed calls whose process stopped before recording what happened",
        "zh": "已放行的调用，其进程在记录结果前停止",
    },
    "pending_n": {"en": "Still pending", "zh": "仍待决定"},
    "decisions": {"en": "Decisions", "zh": "决定"},
    "count": {"en": "Count", "zh": "次数"},
    "rate": {"en": "Rate", "zh": "比例"},
    "per_tool": {"en": "By tool", "zh": "按工具"},
    "per_rule": {"en": "By rule", "zh": "按规则"},
    "asked": {"en": "Asked", "zh": "询问"},
    "chart": {"en": "Calls per day", "zh": "每日调用"},
    "chart_desc": {
        "en": "From {first} to {last}: {calls} calls, {asked} asked; {approve} "
        "approved, {edit} edited, {reject} rejected.",
        "zh": "{first} 至 {last}：{calls} 次调用，{asked} 次询问；批准 {approve}，"
        "编辑 {edit}，拒绝 {reject}。",
    },
    "day_title": {
        "en": "{date}: {calls} calls, {asked} asked; {approve} approved, {edit} "
        "edited, {reject} rejected",
        "zh": "{date}：{calls} 次调用，{asked} 次询问；批准 {approve}，编辑 {edit}，拒绝 {reject}",
    },
    "chart_hidden": {
        "en": "Only the last {drawn} days are drawn; {hidden} earlier days with "
        "activity are in the table.",
        "zh": "图中只画出最近 {drawn} 天；另有 {hidden} 个更早的有记录的日子见下表。",
    },
    "chart_table": {"en": "Numbers per day", "zh": "每日数字"},
    "date": {"en": "Date", "zh": "日期"},
    "legend_calls": {"en": "calls", "zh": "调用"},
    "legend_asked": {"en": "asked", "zh": "询问"},
    "legend_approve": {"en": "approved", "zh": "批准"},
    "legend_edit": {"en": "edited", "zh": "编辑"},
    "legend_reject": {"en": "rejected", "zh": "拒绝"},
    "no_activity": {"en": "Nothing was judged in this period.", "zh": "此期间没有判定任何调用。"},
    "suggestions": {"en": "Suggestions", "zh": "建议"},
    "no_suggestions": {
        "en": "No suggestions (a pattern needs {n} identical answers).",
        "zh": "没有建议（一个模式需要 {n} 次相同的回答）。",
    },
    "sugg_allow": {"en": "Suggested allow rule", "zh": "建议的允许规则"},
    "sugg_deny": {"en": "Suggested deny rule", "zh": "建议的禁止规则"},
    "sugg_remove_ask_rule": {
        "en": "Ask rule that is always approved",
        "zh": "总是被批准的询问规则",
    },
    "why_allow": {
        "en": "approved all {n} times it was asked; never rejected or denied",
        "zh": "询问的 {n} 次全部被批准；从未被拒绝或禁止",
    },
    "why_deny": {"en": "rejected all {n} times it was asked", "zh": "询问的 {n} 次全部被拒绝"},
    "why_remove_ask_rule": {
        "en": "the ask rule {rule} was approved all {n} times; an ask rule "
        "beats every allow rule, so remove it from [permissions] ask "
        "to stop these questions",
        "zh": "询问规则 {rule} 的 {n} 次询问全部被批准；询问规则优先于所有"
        "允许规则，要停止这些提问，请将它从 [permissions] ask 中删除",
    },
    "run_this": {"en": "To allow it in this project, run:", "zh": "在本项目中允许它，请运行："},
    "add_deny": {
        "en": "Add under [permissions] deny in .signoff/settings.toml:",
        "zh": "添加到 .signoff/settings.toml 的 [permissions] deny 下：",
    },
    "examples": {"en": "Examples", "zh": "示例"},
    "top_runs": {"en": "Runs with the most questions", "zh": "提问最多的运行"},
    "questions": {"en": "Questions", "zh": "提问"},
    "calls": {"en": "Calls", "zh": "调用"},
}


def wt(key: str, lang: Lang, **values: object) -> str:
    text = WEB[key][lang]
    return text.format(**values) if values else text


__all__ = ["WEB", "wt"]
