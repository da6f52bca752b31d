"""signoff in front of the agents people already use (each framework an optional extra).

Coding agents: one client-independent core (`core`): a tool call from a coding agent
becomes a signoff call with a preview, the policy judges it, an ask goes the configured way
(the client's own dialog, the durable inbox, or a deferred headless session), and every
verdict, decision and outcome goes on the audit record. Each client is a thin shell over
it that reads and writes that client's hook JSON (`claude_code`, `codex`, `gemini`,
`cursor`). `install` writes and removes the hooks in the client's settings; `defer`
resumes deferred sessions; `claude` is the Claude Agent SDK's `can_use_tool` callback (and
hooks) for programs that embed Claude.

Frameworks: `frameworks` is the core the in-process framework adapters share
(`pydantic_ai`, `langgraph`, `openai_agents`); each of those imports its framework, and
only it does.

Nothing here is imported by `import signoff`: a hook process loads only what it judges with.
"""
