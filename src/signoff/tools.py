"""Tool declarations: what a tool is (its tier and kind) and which argument carries what.

A tool is declared with `@tool(tier=..., kind=...)` or `declare(fn, ...)`. Its JSON schema
is derived from the signature with pydantic and used to validate edited arguments. The
built-in tools are declared the same way, by the signatures of `BuiltinTools`' methods
(which `Workspace` implements); they are judged on every call, often in a process started
for one call, so their schemas are read from the signatures without pydantic
(`tool_schema`; a test holds them equal to pydantic's) and their validators are built on
first use. Names
that coding agents use (`Bash`, `Read`, `Write`, `Edit`, ...) are accepted as aliases of
the built-in declarations, so their calls can be judged too. A tool nobody declared is
`unknown`, and unknown tools ask.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from .exceptions import InvalidInput
from .hints import cast
from .records import field, record, replace
from .tool_schema import argument_fields, arguments_schema, summary

TYPE_CHECKING = False  # not typing's: see signoff/__init__.py

if TYPE_CHECKING:  # pydantic is imported where a validator is made or used
    from typing import Any, Literal, TypeVar

    from pydantic import BaseModel

    from .models import Tier, ToolKind

    F = TypeVar("F", bound=Callable[..., Any])

TIERS: tuple[Tier, ...] = ("read", "write", "destructive", "external", "privileged")
KINDS: tuple[ToolKind, ...] = ("shell", "file_read", "file_write", "network", "other")


@record(frozen=True, slots=True)
class ToolSpec:
    """What signoff knows about one tool."""

    name: str
    tier: Tier
    kind: ToolKind = "other"
    description: str = ""
    command_arg: str | None = None
    path_arg: str | None = None
    url_arg: str | None = None
    amount_arg: str | None = None
    # A shell tool's argument naming the directory the command runs in (Gemini's
    # `dir_path`), relative to the client's working directory.
    cwd_arg: str | None = None
    # More arguments holding paths (each a string or a list of strings), and an argument
    # mapping file names, relative to `path_arg`'s value, to contents (`create_project`).
    path_args: tuple[str, ...] = ()
    files_arg: str | None = None
    default_path: str | None = "."  # what a missing `path_arg` means (the workspace root)
    # A tool that walks the folder at its path (see `signoff.walks`): "names" lists what
    # is in it (judged as `ls DIR`), "contents" reads the files in it (as `grep -r DIR`).
    # `glob_args` hold glob patterns (a string or a list of strings each): "path" globs
    # name what the tool reaches from the folder (`Glob`'s pattern), "filter" globs keep
    # files by name at any depth unless they hold a "/" (ripgrep's `--glob`).
    # `skips_hidden`: the walk leaves out every path the policy hides (signoff's own
    # `search_code`), so a folder that holds one is no read of it.
    walks: str | None = None
    glob_args: tuple[str, ...] = ()
    glob_style: str = "path"
    skips_hidden: bool = False
    # The arguments that say whom or what the call acts on (recipients, account...): an
    # "always" rule is keyed on all of them (and on the amount as a bound). None: nothing
    # declared, so "always" is not offered for an argument-matched tool; (): the tool has
    # no subject, so "always" may allow the tool as a whole.
    subject_args: tuple[str, ...] | None = None
    idempotent: bool = False
    always_ask: bool = False  # ask_human: the human *is* the tool
    # How a string no role above accounts for (any other argument, or one nested in an
    # object or a list, or JSON inside a string) is judged: as a path the call may read
    # ("read"), or read and write ("write"). None: not at all (a declaration that names
    # every path its tool uses). Tools declared from a schema (MCP) set it.
    other_strings: Literal["read", "write"] | None = None
    # Arguments whose value is only ever a string (or null) to the tool: JSON in one is
    # text, not read out of it (a model or a list sent as a string is: see stringpaths).
    string_args: tuple[str, ...] = ()
    schema: Mapping[str, Any] | None = None
    validator: type[BaseModel] | None = field(default=None, compare=False, repr=False)
    # makes `validator` on first use (the built-ins: see the module docstring)
    lazy_validator: Callable[[], type[BaseModel]] | None = field(
        default=None, compare=False, repr=False
    )

    def __post_init__(self) -> None:
        if self.tier not in (*TIERS, "unknown"):
            raise InvalidInput(f"tool {self.name!r}: unknown tier {self.tier!r}")
        if self.kind not in KINDS:
            raise InvalidInput(f"tool {self.name!r}: unknown kind {self.kind!r}")
        if self.walks not in (None, "names", "contents"):
            raise InvalidInput(f"tool {self.name!r}: walks must be 'names' or 'contents'")
        if self.glob_style not in ("path", "filter"):
            raise InvalidInput(f"tool {self.name!r}: glob_style must be 'path' or 'filter'")
        if self.other_strings not in (None, "read", "write"):
            raise InvalidInput(
                f"tool {self.name!r}: other_strings must be read, write or None, "
                f"not {self.other_strings!r}"
            )

    def validate(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """Check arguments against the tool's schema; the error names each bad field."""
        validator = self.validator
        if validator is None and self.lazy_validator is not None:
            validator = self.lazy_validator()
            object.__setattr__(self, "validator", validator)  # made once, kept (compare=False)
        if validator is None:
            return dict(arguments)
        from pydantic import ValidationError

        try:
            model = validator.model_validate(dict(arguments))
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or '(arguments)'}: {err['msg']}"
                for err in exc.errors()
            )
            raise InvalidInput(f"arguments for {self.name!r} are not valid: {problems}") from exc
        return model.model_dump(exclude_unset=True)

    def path_arguments(self) -> tuple[str, ...]:
        """Every argument that names a path: `path_arg` first, then `path_args`."""
        names = (self.path_arg, *self.path_args) if self.path_arg else self.path_args
        return tuple(dict.fromkeys(names))

    def argument(self, arguments: Mapping[str, Any], role: str) -> Any:
        key = getattr(self, f"{role}_arg")
        return None if key is None else arguments.get(key)


def unknown_spec(name: str) -> ToolSpec:
    return ToolSpec(name=name, tier="unknown", kind="other", description="undeclared tool")


def _validator_for(fn: Callable[..., Any], name: str) -> type[BaseModel]:
    """A pydantic model of the function's keyword parameters (extra keys refused)."""
    import inspect
    from typing import Any as Unannotated  # pydantic's reading of a bare parameter

    from pydantic import ConfigDict, create_model

    hints = inspect.get_annotations(fn, eval_str=True)
    fields: dict[str, Any] = {}
    for param in inspect.signature(fn).parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD) or param.name in (
            "self",
            "ctx",
            "idempotency_key",
        ):
            continue
        annotation = hints.get(param.name, Unannotated)
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[param.name] = (annotation, default)
    model: type[BaseModel] = create_model(
        f"{name}_arguments", __config__=ConfigDict(extra="forbid", strict=False), **fields
    )
    return model


def spec_from_function(fn: Callable[..., Any], **options: Any) -> ToolSpec:
    name = options.pop("name", None) or fn.__name__
    validator = _validator_for(fn, name)
    import inspect

    description = options.pop("description", None) or inspect.getdoc(fn) or ""
    spec = ToolSpec(
        name=name,
        description=description.split("\n\n")[0],
        schema=validator.model_json_schema(),
        validator=validator,
        **options,
    )
    for role in ("command", "path", "url", "amount", "files"):
        key = getattr(spec, f"{role}_arg")
        if key is not None and key not in validator.model_fields:
            raise InvalidInput(f"tool {name!r}: {role}_arg {key!r} is not a parameter")
    for key in spec.path_args:
        if key not in validator.model_fields:
            raise InvalidInput(f"tool {name!r}: path_args names {key!r}, not a parameter")
    for key in spec.subject_args or ():
        if key not in validator.model_fields:
            raise InvalidInput(f"tool {name!r}: subject_args names {key!r}, not a parameter")
    return spec


def tool(
    *,
    tier: Tier,
    kind: ToolKind = "other",
    name: str | None = None,
    command_arg: str | None = None,
    path_arg: str | None = None,
    url_arg: str | None = None,
    amount_arg: str | None = None,
    path_args: tuple[str, ...] = (),
    files_arg: str | None = None,
    subject_args: Sequence[str] | None = None,
    idempotent: bool = False,
    description: str | None = None,
) -> Callable[[F], F]:
    """Declare a function as a tool. The function itself is unchanged; its spec is attached.

    >>> @tool(tier="read", kind="file_read", path_arg="path")
    ... def read_notes(path: str) -> str:
    ...     return open(path).read()
    >>> read_notes.__signoff_spec__.tier
    'read'
    """

    def decorate(fn: F) -> F:
        spec = spec_from_function(
            fn,
            name=name,
            tier=tier,
            kind=kind,
            command_arg=command_arg,
            path_arg=path_arg,
            url_arg=url_arg,
            amount_arg=amount_arg,
            path_args=tuple(path_args),
            files_arg=files_arg,
            subject_args=None if subject_args is None else tuple(subject_args),
            idempotent=idempotent,
            description=description,
        )
        fn.__signoff_spec__ = spec  # type: ignore[attr-defined]
        return fn

    return decorate


def spec_of(fn: Callable[..., Any]) -> ToolSpec | None:
    return cast(ToolSpec | None, getattr(fn, "__signoff_spec__", None))


# ----------------------------------------------------------------- built-in declarations


def builtin(tier: Tier, kind: ToolKind, **roles: Any) -> Callable[[F], F]:
    """Mark a `BuiltinTools` method as a built-in tool, with its tier, kind and roles."""

    def mark(fn: F) -> F:
        fn.__signoff_builtin__ = (tier, kind, roles)  # type: ignore[attr-defined]
        return fn

    return mark


class BuiltinTools:
    """The built-in tools, declared once: each method's signature is the tool's arguments
    (with a default: optional), the first line of its docstring is what the model is told,
    and `@builtin` gives its tier, kind and which argument carries what. The declarations
    are made from these (`tool_schema`, no pydantic: judging a call stays fast).
    `signoff.workspace.Workspace` implements the methods; mypy holds its overrides to these
    signatures, and tests/test_builtin_declarations.py to the arguments."""

    @builtin("read", "file_read", path_arg="path", default_path=None)
    def read_file(self, path: str) -> str:
        """Read a file of the workspace."""
        raise NotImplementedError

    @builtin("read", "file_read", path_arg="path", walks="names")
    def list_dir(self, path: str | None = None) -> str:
        """List a directory."""
        raise NotImplementedError

    @builtin("read", "file_read", path_arg="path", walks="contents", skips_hidden=True)
    def search_code(self, pattern: str, path: str | None = None) -> str:
        """Search the workspace for a pattern."""
        raise NotImplementedError

    @builtin("write", "file_write", path_arg="path", default_path=None)
    def write_file(self, path: str, content: str) -> str:
        """Write a whole file."""
        raise NotImplementedError

    @builtin("write", "file_write", path_arg="path", default_path=None)
    def edit_file(self, path: str, old: str, new: str) -> str:
        """Replace one exact piece of text in a file."""
        raise NotImplementedError

    @builtin("write", "file_write", path_arg="path", files_arg="files", default_path=None)
    def create_project(self, path: str, files: dict[str, str]) -> str:
        """Create a directory tree of new files."""
        raise NotImplementedError

    @builtin("destructive", "file_write", path_arg="path", default_path=None)
    def delete_file(self, path: str) -> str:
        """Delete a file."""
        raise NotImplementedError

    @builtin("destructive", "shell", command_arg="command")
    def execute_command(self, command: str, timeout: float | None = None) -> str:
        """Run a shell command in the workspace."""
        raise NotImplementedError

    @builtin("external", "network", url_arg="url")
    def fetch_url(self, url: str) -> str:
        """Fetch a URL (HTTP GET)."""
        raise NotImplementedError

    @builtin("external", "other", subject_args=("to", "cc"))
    def send_email(self, to: str, subject: str, body: str, cc: list[str] | None = None) -> str:
        """Send an email."""
        raise NotImplementedError

    @builtin("read", "other", always_ask=True)
    def ask_human(self, question: str, options: list[str] | None = None) -> str:
        """Ask the person a question."""
        raise NotImplementedError


def _builtin_spec(fn: Callable[..., Any]) -> ToolSpec:
    """A built-in's declaration from its `BuiltinTools` method (see `tool_schema`)."""
    tier, kind, roles = fn.__signoff_builtin__  # type: ignore[attr-defined]
    name = fn.__name__
    fields = argument_fields(fn, name)

    def make_validator() -> type[BaseModel]:
        from pydantic import ConfigDict, create_model

        defined: dict[str, Any] = {k: (t, ... if req else None) for k, (t, req) in fields.items()}
        model: type[BaseModel] = create_model(
            f"{name}_arguments", __config__=ConfigDict(extra="forbid"), **defined
        )
        return model

    return ToolSpec(
        name=name,
        tier=tier,
        kind=kind,
        description=summary(fn),
        schema=arguments_schema(fields, name),
        lazy_validator=make_validator,
        **roles,
    )


BUILTIN_SPECS: dict[str, ToolSpec] = {
    name: _builtin_spec(fn)
    for name, fn in vars(BuiltinTools).items()
    if hasattr(fn, "__signoff_builtin__")
}

# Names coding agents use, mapped to (built-in, {their argument: ours}).
ALIASES: dict[str, tuple[str, dict[str, str]]] = {
    "Bash": ("execute_command", {"command": "command", "timeout": "timeout"}),
    "Read": ("read_file", {"file_path": "path"}),
    "Write": ("write_file", {"file_path": "path", "content": "content"}),
    "Edit": ("edit_file", {"file_path": "path", "old_string": "old", "new_string": "new"}),
    "MultiEdit": ("edit_file", {"file_path": "path"}),
    "NotebookEdit": ("edit_file", {"notebook_path": "path"}),
    "LS": ("list_dir", {"path": "path"}),
    "Glob": ("search_code", {"pattern": "pattern", "path": "path"}),
    "Grep": ("search_code", {"pattern": "pattern", "path": "path"}),
    "WebFetch": ("fetch_url", {"url": "url"}),
    "shell": ("execute_command", {"command": "command"}),
    "run_command": ("execute_command", {"command": "command"}),
    "bash": ("execute_command", {"command": "command"}),
}

# The coding agents' own listing and search tools run in the client, which skips nothing
# the policy hides: each is judged by what it can reach (`ToolSpec.walks`).
ALIAS_REACH: dict[str, dict[str, Any]] = {
    "LS": {"walks": "names"},
    "Glob": {"walks": "names", "glob_args": ("pattern",)},
    "Grep": {"walks": "contents", "glob_args": ("glob",), "glob_style": "filter"},
}

# Rule names that stand for a whole kind of tool, as coding agents write them.
RULE_GROUPS: dict[str, ToolKind] = {
    "Bash": "shell",
    "Read": "file_read",
    "Edit": "file_write",
    "Write": "file_write",
    "WebFetch": "network",
}


def alias_spec(alias: str) -> ToolSpec:
    target, argmap = ALIASES[alias]
    base = BUILTIN_SPECS[target]
    inverse = {ours: theirs for theirs, ours in argmap.items()}

    def theirs(key: str | None) -> str | None:
        return None if key is None else inverse.get(key, key)

    # Alias calls carry other argument names, so the built-in validator does not apply.
    return replace(
        base,
        name=alias,
        command_arg=theirs(base.command_arg),
        path_arg=theirs(base.path_arg),
        url_arg=theirs(base.url_arg),
        amount_arg=theirs(base.amount_arg),
        path_args=tuple(t for t in map(theirs, base.path_args) if t),
        files_arg=theirs(base.files_arg),
        schema=None,
        validator=None,
        lazy_validator=None,
        skips_hidden=False,  # another program's tool: nothing of signoff's skips for it
        **ALIAS_REACH.get(alias, {}),
    )


_BUILTINS_WITH_ALIASES: dict[str, ToolSpec] = {}  # made by the first Registry


def _builtins_with_aliases() -> dict[str, ToolSpec]:
    """The built-in specs and their aliases, made once per process (specs are frozen): a
    policy is made at every hook call and every framework adapter made afresh."""
    if not _BUILTINS_WITH_ALIASES:
        table = dict(BUILTIN_SPECS)
        for alias in ALIASES:
            table.setdefault(alias, alias_spec(alias))
        _BUILTINS_WITH_ALIASES.update(table)
    return _BUILTINS_WITH_ALIASES


class Registry:
    """Specs by name: declared tools first, then built-ins, then aliases, else unknown."""

    def __init__(self, specs: Mapping[str, ToolSpec] | None = None, *, builtins: bool = True):
        self._specs: dict[str, ToolSpec] = dict(_builtins_with_aliases()) if builtins else {}
        self._specs.update(specs or {})

    def add(self, spec: ToolSpec) -> None:
        self._specs[spec.name] = spec

    def get(self, name: str) -> ToolSpec:
        spec = self._specs.get(name)
        return spec if spec is not None else unknown_spec(name)

    def known(self, name: str) -> bool:
        return name in self._specs

    def names(self) -> list[str]:
        return sorted(self._specs)


def canonical_tool_name(name: str) -> str:
    """The built-in a name stands for (`Bash` -> `execute_command`), else the name."""
    alias = ALIASES.get(name)
    return alias[0] if alias else name


# Until the layout change this module held the built-in tools (now `signoff.workspace`);
# their names keep working for one release, with a DeprecationWarning.
_WORKSPACE_NAMES = frozenset(
    {
        "FILE_WRITE_TOOLS",
        "OUTBOX",
        "OutsideWorkspace",
        "RevertConflict",
        "Snapshot",
        "SnapshotEntry",
        "ToolError",
        "Workspace",
        "canonical_call",
        "cut_text",
        "openai_tools",
    }
)


def __getattr__(name: str) -> Any:
    if name in _WORKSPACE_NAMES:
        from ._moved import forward

        return forward(__name__, "signoff.workspace")(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "ALIASES",
    "BUILTIN_SPECS",
    "BuiltinTools",
    "Registry",
    "ToolSpec",
    "canonical_tool_name",
    "spec_of",
    "tool",
]
