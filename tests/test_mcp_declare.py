"""The proxy's configuration and how an upstream tool becomes a signoff declaration
(no `mcp` package needed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from signoff.exceptions import ConfigurationError
from signoff.mcp.config import ToolSetting, load_config
from signoff.mcp.declare import Hints, argument_roles, declare, tier_of, unjudged
from signoff.mcp.pins import digest, digest_v1


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / ".signoff" / "mcp.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_config_reads_servers_tools_and_ask(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        '[servers.fs]\ncommand = "node"\nargs = ["x.js", "."]\n'
        '[servers.crm]\nurl = "https://crm.example/mcp"\ntrusted = true\n'
        '[tools."fs__write_file"]\ntier = "write"\nidempotent = true\n'
        '[ask]\nvia = "pending"\nexpiry = "2h"\nprincipal = "alice"\n',
    )
    config = load_config(path)
    assert config.workspace == str(tmp_path.resolve())
    assert config.servers["fs"].args == ("x.js", ".")
    assert config.servers["crm"].trusted and config.servers["crm"].url
    assert config.tools["fs__write_file"] == ToolSetting("write", True)
    assert config.expiry == 7200 and config.principal == "alice"


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("", "[servers]"),
        ('[servers.a]\ncommand = "x"\nurl = "http://h"\n', "exactly one of command"),
        ('[servers.a]\nurl = "ftp://h"\n', "not an http(s) URL"),
        ('[servers.a__b]\ncommand = "x"\n', "server name"),
        ('[servers.a]\ncommand = "x"\nshell = true\n', "unknown key 'shell'"),
        ('[servers.a]\ncommand = "x"\n[tools."b__t"]\ntier = "read"\n', "names no server"),
        ('[servers.a]\ncommand = "x"\n[tools."a__t"]\ntier = "safe"\n', "'safe' is not one of"),
        ('[servers.a]\ncommand = "x"\n[ask]\nvia = "url"\n', "needs inbox"),
        ('[servers.a]\ncommand = "x"\n[ask]\nvia = "email"\n', "'email' is not one of"),
        ("[servers.a\n", "not valid TOML"),
    ],
)
def test_config_errors_name_the_key(tmp_path: Path, text: str, names: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigurationError) as info:
        load_config(path)
    assert names in str(info.value)
    assert str(path) in str(info.value)


def test_missing_config_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="no such file"):
        load_config(tmp_path / "nope.toml")


@pytest.mark.parametrize(
    ("hints", "tier"),
    [
        (Hints(read_only=True), "read"),
        (Hints(read_only=False, destructive=False, open_world=False), "write"),
        (Hints(read_only=False, destructive=False), "external"),  # open world by default
        (Hints(read_only=False, open_world=False), "destructive"),  # destructive by default
        (Hints(), "destructive"),
        (None, "unknown"),
    ],
)
def test_annotations_as_tiers(hints: Hints | None, tier: str) -> None:
    assert tier_of(None, hints, trusted=False) == tier


def test_annotations_only_tighten_a_declaration_unless_trusted() -> None:
    destructive = Hints(read_only=False, destructive=True)
    declared = ToolSetting(tier="write")
    assert tier_of(declared, destructive, trusted=False) == "destructive"
    assert tier_of(declared, destructive, trusted=True) == "write"
    assert tier_of(ToolSetting(tier="destructive"), Hints(read_only=True), trusted=False) == (
        "destructive"
    )


def test_path_and_url_arguments_from_the_schema() -> None:
    schema = {
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "paths": {"type": "array", "items": {"type": "string"}},
            "destination": {"type": "string"},
            "data": {"type": "string", "format": "uri"},
            "api_url": {"type": "string"},
            "count": {"type": "integer"},
            "file": {"type": "integer"},  # not a string: not a path
        },
    }
    paths, urls = argument_roles(schema)
    assert paths == ("path", "paths", "destination")
    assert urls == ("data", "api_url")


def test_declaration_kinds() -> None:
    files = {"type": "object", "properties": {"path": {"type": "string"}}}
    read = declare("fs__read", "", files, Hints(read_only=True), None, trusted=False)
    assert (read.tier, read.kind, read.path_arg) == ("read", "file_read", "path")
    write = declare("fs__write", "", files, Hints(), None, trusted=False)
    assert (write.tier, write.kind) == ("destructive", "file_write")
    web = {"type": "object", "properties": {"url": {"type": "string"}}}
    fetch = declare("w__fetch", "", web, Hints(read_only=True), None, trusted=False)
    assert (fetch.kind, fetch.url_arg, fetch.tier) == ("network", "url", "read")
    two = {"type": "object", "properties": {"url": {"type": "string"}, "uri": {"type": "string"}}}
    # one URL is judged per call: with two, the tool cannot be allowed by its tier alone
    assert declare("w__two", "", two, Hints(read_only=True), None, trusted=False).tier == (
        "external"
    )


def test_pin_changes_with_anything_the_client_is_shown() -> None:
    doc = {
        "name": "t",
        "description": "reads a file",
        "inputSchema": {"type": "object"},
        "annotations": {"readOnlyHint": True},
    }
    base = digest(doc)
    assert base == digest(dict(reversed(doc.items())))
    for key, value in [
        ("description", "reads a file and mails it"),
        ("inputSchema", {"type": "object", "x": 1}),
        ("annotations", {"readOnlyHint": False}),
        ("title", "Read"),
        ("outputSchema", {"type": "object"}),
        ("_meta", {"k": 1}),
        ("anything", "a field a later protocol adds"),
    ]:
        assert digest({**doc, key: value}) != base, key
    # the first format's pin is still computed, to read the pins it wrote
    assert digest_v1(doc) == digest_v1({**doc, "title": "Read"}) != base


@pytest.mark.parametrize(
    "name", ["filePath", "file-path", "FILE_PATH", "targetDir", "sourceFiles", "cwd"]
)
def test_path_arguments_in_any_spelling(name: str) -> None:
    schema = {"type": "object", "properties": {name: {"type": "string"}}}
    assert argument_roles(schema) == ((name,), ())


@pytest.mark.parametrize("name", ["baseUrl", "targetURL", "webhook_uri", "links"])
def test_url_arguments_in_any_spelling(name: str) -> None:
    schema = {"type": "object", "properties": {name: {"type": "string"}}}
    assert argument_roles(schema) == ((), (name,))


def test_words_that_merely_contain_a_role_are_not_one() -> None:
    schema = {
        "type": "object",
        "properties": {"profile": {"type": "string"}, "rooted": {"type": "string"}},
    }
    assert argument_roles(schema) == ((), ())


@pytest.mark.parametrize(
    "schema",
    [
        {  # a list of objects with a path in each
            "type": "object",
            "properties": {
                "files": {
                    "type": "array",
                    "items": {"type": "object", "properties": {"path": {"type": "string"}}},
                }
            },
        },
        {  # an object with a URL inside
            "type": "object",
            "properties": {
                "request": {"type": "object", "properties": {"endpoint": {"type": "string"}}}
            },
        },
        {"type": "object", "properties": {}, "additionalProperties": True},
    ],
)
def test_what_the_policy_cannot_judge_asks_even_if_read_only(schema: dict[str, object]) -> None:
    spec = declare("s__t", "", schema, Hints(read_only=True), None, trusted=False)
    assert spec.tier == "destructive"


# ------------------------------------------------------------------ schemas as pydantic writes them

OPTIONAL_STR = {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None}


@pytest.mark.parametrize(
    "prop",
    [
        OPTIONAL_STR,  # Optional[str]
        {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}]},
        {"oneOf": [{"type": "integer"}, {"type": "string"}]},
        {"allOf": [{"$ref": "#/$defs/Name"}]},
        {"$ref": "#/$defs/Name"},
        {"title": "Untyped"},  # `Any`: a string too
    ],
)
def test_a_path_argument_in_any_shape_a_validator_reads(prop: dict[str, object]) -> None:
    schema = {"$defs": {"Name": {"type": "string"}}, "type": "object", "properties": {"dest": prop}}
    assert argument_roles(schema) == (("dest",), ())


def test_a_path_by_format_whatever_its_name() -> None:
    """pydantic writes `Path` as `"format": "path"` (FilePath, DirectoryPath likewise)."""
    schema = {
        "type": "object",
        "properties": {
            "where": {"type": "string", "format": "path"},
            "spot": {"anyOf": [{"type": "string", "format": "directory-path"}, {"type": "null"}]},
            "link": {"anyOf": [{"type": "string", "format": "uri"}, {"type": "null"}]},
        },
    }
    assert argument_roles(schema) == (("where", "spot"), ("link",))


MODEL = {"properties": {"path": {"type": "string"}}, "type": "object", "title": "Target"}


@pytest.mark.parametrize(
    "prop",
    [
        {"$ref": "#/$defs/Target"},  # a pydantic model
        {"type": "array", "items": {"$ref": "#/$defs/Target"}},  # a list of models
        {"type": "object", "additionalProperties": {"$ref": "#/$defs/Target"}},  # a map
        {"anyOf": [{"type": "integer"}, {"$ref": "#/$defs/Target"}]},  # a union
        {"type": "array", "prefixItems": [{"type": "integer"}, {"$ref": "#/$defs/Target"}]},
    ],
)
def test_a_path_inside_a_model_behind_a_ref_asks(prop: dict[str, object]) -> None:
    schema = {"$defs": {"Target": MODEL}, "type": "object", "properties": {"target": prop}}
    spec = declare("s__t", "", schema, Hints(read_only=True), None, trusted=False)
    assert spec.tier == "destructive"


@pytest.mark.parametrize(
    "ref", ["https://example.com/schema.json", "#/$defs/Missing", "other.json#/Target", 7]
)
def test_a_schema_that_cannot_be_read_asks(ref: object) -> None:
    schema = {"type": "object", "properties": {"target": {"$ref": ref}}}
    assert unjudged(schema) is not None
    spec = declare("s__t", "", schema, Hints(read_only=True), None, trusted=False)
    assert spec.tier == "destructive"


def test_a_model_that_holds_itself_is_read_to_its_end() -> None:
    node = {
        "type": "object",
        "properties": {"label": {"type": "string"}, "children": {"$ref": "#/$defs/Node"}},
    }
    schema = {"$defs": {"Node": node}, "type": "object", "properties": {"root": node}}
    assert unjudged(schema) is None  # no path inside, and it ends
    assert declare("s__t", "", schema, Hints(read_only=True), None, trusted=False).tier == "read"


def test_every_other_string_is_judged_as_a_path_read_or_written() -> None:
    """What no role accounts for is not taken as harmless (see effects.of_call)."""
    plain = {"type": "object", "properties": {"file_name": {"type": "string"}}}
    read = declare("s__r", "", plain, Hints(read_only=True), None, trusted=False)
    write = declare(
        "s__w", "", plain, Hints(destructive=False, open_world=False), None, trusted=False
    )
    unknown = declare("s__u", "", plain, None, None, trusted=False)
    assert (read.other_strings, write.other_strings, unknown.other_strings) == (
        "read",
        "write",
        "write",
    )
    assert (read.tier, write.tier) == ("read", "write")  # plain strings change no tier


def test_only_plain_text_arguments_keep_their_json_unread() -> None:
    """JSON inside a string is read out of it (the Python SDK decodes a model or a list
    sent as a string) unless the argument is only ever a string to the tool."""
    schema = {
        "$defs": {"Target": MODEL, "Kind": {"enum": ["a", "b"], "type": "string"}},
        "type": "object",
        "properties": {
            "content": {"type": "string"},
            "note": OPTIONAL_STR,
            "kind": {"$ref": "#/$defs/Kind"},
            "target": {"$ref": "#/$defs/Target"},
            "either": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
            "data": {"type": "string", "contentMediaType": "application/json"},
            "anything": {"title": "Anything"},
        },
    }
    spec = declare("s__t", "", schema, Hints(read_only=True), None, trusted=False)
    assert spec.string_args == ("content", "note", "kind")
