"""Recommended project rules: the common test and build commands of a project.

`pytest`, `npm test`, `cargo test` run project code, so the shell analysis asks about
them (the agent may have just written that code). In most projects a person approves them
every time; one rule in `.signoff/settings.toml` makes them run without asking. This table
is the list docs/shell.md recommends, and `signoff stats` names a suggestion that matches
it as such. Rules are compared by their specifier, whatever the shell tool is called.
"""

from __future__ import annotations

RECOMMENDED: tuple[str, ...] = (
    # JavaScript / TypeScript
    "npm test:*",
    "npm run test:*",
    "npm run build:*",
    "npm run lint:*",
    "npm run typecheck:*",
    "pnpm test:*",
    "pnpm run test:*",
    "pnpm run build:*",
    "yarn test:*",
    "yarn run test:*",
    "yarn build:*",
    "bun test:*",
    "npx jest:*",
    "npx vitest:*",
    "npx tsc:*",
    "tsc:*",
    # Python
    "pytest:*",
    "python -m pytest:*",
    "python3 -m pytest:*",
    "uv run pytest:*",
    "tox:*",
    "nox:*",
    "hatch run test:*",
    "poetry run pytest:*",
    # Rust, Go, C
    "cargo test:*",
    "cargo build:*",
    "cargo check:*",
    "cargo clippy:*",
    "cargo nextest:*",
    "go test:*",
    "go build:*",
    "go vet:*",
    "make test:*",
    "make check:*",
    "make build:*",
    "ctest:*",
    "ninja:*",
    # JVM, .NET, Ruby, Elixir
    "mvn test:*",
    "mvn verify:*",
    "gradle test:*",
    "gradle build:*",
    "dotnet test:*",
    "dotnet build:*",
    "bundle exec rspec:*",
    "bundle exec rake test:*",
    "mix test:*",
)
_SPECIFIERS = frozenset(RECOMMENDED)


def recommended(rule: str) -> bool:
    """Whether `Tool(specifier)` is one of the recommended test or build rules."""
    name, paren, rest = rule.partition("(")
    return bool(name) and paren == "(" and rest.endswith(")") and rest[:-1] in _SPECIFIERS


__all__ = ["RECOMMENDED", "recommended"]
