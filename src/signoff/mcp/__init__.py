"""signoff in front of MCP servers: `signoff mcp proxy` (see docs/mcp.md).

`config` and `declare` need only signoff; `proxy` imports the `mcp` package (the `mcp`
extra), so importing this package does not."""
