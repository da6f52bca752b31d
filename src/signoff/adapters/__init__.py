"""Adapters: signoff inside other agents and agent frameworks (each an optional extra).

`frameworks` is the core the in-process framework adapters share (`pydantic_ai`,
`langgraph`, `openai_agents`); each of those imports its framework, and only it does.
"""
