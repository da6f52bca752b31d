"""How `signoff.records` makes a dataclass without `dataclasses` (read that module first).

Every method is a closure over the class's fields, made once per class; nothing is
compiled when a class is made. Only a class a process makes `HOT` instances of gets its
`__init__` compiled (`compiled_init`), as dataclass writes it."""

from __future__ import annotations

from operator import attrgetter

TYPE_CHECKING = False  # not typing's: see signoff/__init__.py

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

    Specs = tuple[tuple[str, "Field"], ...]


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


class Field:
    """What `field(...)` said about one attribute, kept on the class as `_record_fields`."""

    __slots__ = ("compare", "default", "default_factory", "init", "repr")

    def __init__(
        self,
        default: Any = MISSING,
        default_factory: Any = MISSING,
        init: bool = True,
        repr: bool = True,
        compare: bool = True,
    ) -> None:
        if default is not MISSING and default_factory is not MISSING:
            raise ValueError("cannot specify both default and default_factory")
        self.default = default
        self.default_factory = default_factory
        self.init = init
        self.repr = repr
        self.compare = compare

    @property
    def required(self) -> bool:
        return self.default is MISSING and self.default_factory is MISSING


def field(
    *,
    default: Any = MISSING,
    default_factory: Any = MISSING,
    init: bool = True,
    repr: bool = True,
    compare: bool = True,
) -> Any:
    """`dataclasses.field` for a record (the arguments signoff uses)."""
    return Field(default, default_factory, init, repr, compare)


class FrozenInstanceError(AttributeError):
    """Assigning to a field of a frozen record (an AttributeError, as dataclasses')."""


def record(cls: Any = None, /, *, frozen: bool = False, slots: bool = False) -> Any:
    """`dataclasses.dataclass(cls, frozen=..., slots=...)`, built without exec."""

    def wrap(cls: type) -> type:
        return _make(cls, frozen, slots)

    return wrap if cls is None else wrap(cls)


def replace(obj: Any, /, **changes: Any) -> Any:
    """`dataclasses.replace`: a copy of `obj` with `changes`, made through its `__init__`
    (so `__post_init__` checks the new values)."""
    specs: Specs | None = type(obj).__dict__.get("_record_fields")
    if specs is None:  # someone else's dataclass
        import dataclasses

        return dataclasses.replace(obj, **changes)
    for name, spec in specs:
        if not spec.init:
            if name in changes:
                raise ValueError(
                    f"field {name} is declared with init=False, it cannot be specified with "
                    "replace()"
                )
        elif name not in changes:
            changes[name] = getattr(obj, name)
    return obj.__class__(**changes)


# ----------------------------------------------------------------------- making the class


def _fields_of(cls: type) -> Specs:
    annotations: dict[str, Any] = cls.__dict__.get("__annotations__", {})  # noqa: RUF063 (its own, as dataclass reads them)
    specs = []
    seen_default = False
    for name, annotation in annotations.items():
        text = annotation if isinstance(annotation, str) else repr(annotation)
        if text.startswith(("ClassVar", "InitVar", "KW_ONLY", "typing.", "dataclasses.")):
            raise TypeError(f"{cls.__qualname__}.{name}: a record has no {text}")
        value = cls.__dict__.get(name, MISSING)
        spec = value if isinstance(value, Field) else Field(value)
        if spec.default is not MISSING and type(spec.default).__hash__ is None:
            raise ValueError(
                f"mutable default {type(spec.default)} for field {name} is not allowed: use "
                "default_factory"
            )
        if spec.init:
            if seen_default and spec.required:
                raise TypeError(f"non-default argument {name!r} follows default argument")
            seen_default = seen_default or not spec.required
        specs.append((name, spec))
    for base in cls.__mro__[1:-1]:
        if "_record_fields" in base.__dict__ or "__dataclass_fields__" in base.__dict__:
            raise TypeError(f"{cls.__qualname__}: a record does not inherit fields")
    return tuple(specs)


def _class(cls: type, specs: Specs, slots: bool) -> Any:
    """The class itself, or (slots) a new one with a slot per field, as dataclass makes."""
    if not slots:
        for name, spec in specs:
            if isinstance(cls.__dict__.get(name), Field):  # the default stands in its place
                if spec.default is MISSING:
                    delattr(cls, name)
                else:
                    setattr(cls, name, spec.default)
        return cls
    body = dict(cls.__dict__)
    if "__slots__" in body:
        raise TypeError(f"{cls.__qualname__} already specifies __slots__")
    for name, _ in specs:  # a slot and a class attribute cannot share a name
        body.pop(name, None)
    body["__slots__"] = tuple(name for name, _ in specs)
    body.pop("__dict__", None)
    body.pop("__weakref__", None)
    made = type(cls)(cls.__name__, cls.__bases__, body)
    made.__qualname__ = cls.__qualname__
    return made


def _make(cls: type, frozen: bool, slots: bool) -> type:
    specs = _fields_of(cls)
    names = tuple(name for name, _ in specs)
    made = _class(cls, specs, slots)
    own = made.__dict__
    made._record_fields = specs
    made._record_frozen = frozen
    made.__dataclass_fields__ = _LazyDataclass("__dataclass_fields__")
    made.__dataclass_params__ = _LazyDataclass("__dataclass_params__")
    if "__init__" not in own:
        made.__init__ = _init(made, specs, frozen)
    if "__repr__" not in own:
        made.__repr__ = _repr(tuple(name for name, spec in specs if spec.repr))
    compared = tuple(name for name, spec in specs if spec.compare)
    if "__eq__" not in own:
        made.__eq__ = _eq(compared)
    if own.get("__hash__") is None:  # not the class's own: by the fields when frozen, as
        made.__hash__ = _hash(compared) if frozen else None  # dataclass decides it
    if frozen:
        if "__setattr__" in own or "__delattr__" in own:
            raise TypeError(f"cannot overwrite attribute __setattr__ in {cls.__qualname__}")
        made.__setattr__, made.__delattr__ = _frozen(made, frozenset(names))
        if slots:  # object's own state would be set back by the refused __setattr__
            made.__getstate__, made.__setstate__ = _state(names)
    if "__match_args__" not in own:
        setattr(made, "__match_args__", tuple(name for name, spec in specs if spec.init))  # noqa: B010
    made_class: type = made
    return made_class


class _LazyDataclass:
    """`__dataclass_fields__` / `__dataclass_params__`, made by `dataclasses` when first
    asked for and then kept on the class: those of a twin class that `dataclass` makes from
    the same annotations and fields, so they are exactly `dataclass`'s."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, obj: object, owner: type) -> Any:
        import dataclasses

        def same(value: Any) -> Any:
            return dataclasses.MISSING if value is MISSING else value

        specs: Specs = owner.__dict__["_record_fields"]
        body: dict[str, Any] = {
            "__annotations__": dict(owner.__dict__.get("__annotations__", {})),  # noqa: RUF063
            "__module__": owner.__module__,
            "__qualname__": owner.__qualname__,
        }
        for name, spec in specs:
            body[name] = dataclasses.field(
                default=same(spec.default),
                default_factory=same(spec.default_factory),
                init=spec.init,
                repr=spec.repr,
                compare=spec.compare,
            )
        frozen: bool = owner.__dict__["_record_frozen"]
        twin: Any = dataclasses.dataclass(frozen=frozen)(type(owner.__name__, (), body))
        type.__setattr__(owner, "__dataclass_fields__", twin.__dataclass_fields__)
        type.__setattr__(owner, "__dataclass_params__", twin.__dataclass_params__)
        return owner.__dict__[self.name]


# ------------------------------------------------------------------------------ methods


def _init(cls: type, specs: Specs, frozen: bool) -> Callable[..., None]:
    params = tuple((name, spec) for name, spec in specs if spec.init)
    count = len(params)
    store = _storer(cls, tuple(name for name, _ in params), frozen)
    later = tuple((name, spec) for name, spec in specs if not spec.init and not spec.required)
    store_later = _storer(cls, tuple(name for name, _ in later), frozen)
    fill = _filler(cls, params)
    post_init = hasattr(cls, "__post_init__")
    made = [0]

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        store(self, args if len(args) == count and not kwargs else fill(args, kwargs))
        if later:
            store_later(self, [_default(spec) for _, spec in later])
        made[0] += 1
        if made[0] == HOT and type(self).__init__ is __init__:  # a long-lived process's
            type.__setattr__(cls, "__init__", compiled_init(cls))
        if post_init:
            self.__post_init__()

    __init__.__qualname__ = f"{cls.__qualname__}.__init__"
    return __init__


HOT = 256  # instances made, after which a class's __init__ is compiled (see compiled_init)


def compiled_init(cls: Any) -> Callable[..., None]:
    """The `__init__` dataclass would write for a record, compiled. A hook process makes
    few of each record and is better off without compiling anything; a process that makes
    many (a server, a batch) gets this one once a class has made `HOT` instances: the same
    behaviour, in straight-line code. `tests/test_records.py` checks both against dataclass."""
    specs: Specs = cls.__dict__["_record_fields"]
    frozen: bool = cls.__dict__["_record_frozen"]
    names: dict[str, Any] = {"__records_setattr": object.__setattr__, "__FACTORY": _FACTORY}
    params, body = [], []
    for name, spec in specs:
        if spec.default is not MISSING:
            names[f"__default_{name}"] = spec.default
        if spec.default_factory is not MISSING:
            names[f"__factory_{name}"] = spec.default_factory
        if spec.init:
            value = name
            if spec.default is not MISSING:
                params.append(f"{name}=__default_{name}")
            elif spec.default_factory is not MISSING:
                params.append(f"{name}=__FACTORY")
                value = f"__factory_{name}() if {name} is __FACTORY else {name}"
            else:
                params.append(name)
        elif spec.default is not MISSING:
            value = f"__default_{name}"
        elif spec.default_factory is not MISSING:
            value = f"__factory_{name}()"
        else:
            continue  # set by __post_init__, or never
        body.append(
            f"__records_setattr(__records_self, {name!r}, {value})"
            if frozen
            else f"__records_self.{name} = {value}"
        )
    if hasattr(cls, "__post_init__"):
        body.append("__records_self.__post_init__()")
    source = f"def __init__(__records_self, {', '.join(params)}):\n"
    source += "".join(f"    {line}\n" for line in body or ["pass"])
    made: dict[str, Any] = {}
    exec(source, names, made)  # the source is made of the class's own field names
    init: Callable[..., None] = made["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    return init


def _default(spec: Field) -> Any:
    return spec.default if spec.default is not MISSING else spec.default_factory()


def _storer(
    cls: type, names: tuple[str, ...], frozen: bool
) -> Callable[[Any, Sequence[Any]], None]:
    """Sets `names` to values as dataclass's `__init__` does (object.__setattr__ when
    frozen, else setattr), by the quickest way that is the same: a slot's own setter, or
    the instance dict when no `__setattr__` of the class's stands in between."""
    own: Any = cls.__setattr__  # a class of records may define one; none of signoff's do
    if not frozen and own is not object.__setattr__:

        def store(self: Any, values: Sequence[Any]) -> None:
            for name, value in zip(names, values, strict=True):
                setattr(self, name, value)

    elif "__slots__" in cls.__dict__:
        setters = tuple(cls.__dict__[name].__set__ for name in names)

        def store(self: Any, values: Sequence[Any]) -> None:
            for setter, value in zip(setters, values, strict=True):
                setter(self, value)

    else:

        def store(self: Any, values: Sequence[Any]) -> None:
            self.__dict__.update(zip(names, values, strict=True))

    return store


_REQUIRED: Any = _Missing()
_FACTORY: Any = _Missing()


def _filler(cls: type, params: Specs) -> Callable[[tuple[Any, ...], dict[str, Any]], Sequence[Any]]:
    """The values of `__init__`'s parameters from a call with keywords or defaults left
    out; a call Python would refuse goes to `_bind`, which raises Python's TypeError."""
    index = {name: at for at, (name, _) in enumerate(params)}
    template = [
        _REQUIRED if spec.required else _FACTORY if spec.default is MISSING else spec.default
        for _, spec in params
    ]
    required = [at for at, (_, spec) in enumerate(params) if spec.required]
    factories = [
        (at, spec.default_factory)
        for at, (_, spec) in enumerate(params)
        if spec.default_factory is not MISSING
    ]

    def fill(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Sequence[Any]:
        given = len(args)
        if given > len(params):
            return _bind(cls, params, args, kwargs)
        values = [*args, *template[given:]]
        for name, value in kwargs.items():
            at = index.get(name, -1)
            if at < given:  # unknown, or given by position too
                return _bind(cls, params, args, kwargs)
            values[at] = value
        for at in required:
            if values[at] is _REQUIRED:
                return _bind(cls, params, args, kwargs)
        for at, factory in factories:
            if values[at] is _FACTORY:
                values[at] = factory()
        return values

    return fill


def _bind(cls: type, params: Specs, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
    """The values of `__init__`'s parameters, or Python's own TypeError for a bad call."""
    where = f"{cls.__qualname__}.__init__()"
    if len(args) > len(params):
        least = sum(1 for _, spec in params if spec.required)
        most = len(params)
        takes = f"from {least + 1} to {most + 1}" if least < most else f"{most + 1}"
        noun = "argument" if takes == "1" else "arguments"
        raise TypeError(f"{where} takes {takes} positional {noun} but {len(args) + 1} were given")
    values = list(args)
    missing = []
    for name, spec in params[len(args) :]:
        if name in kwargs:
            values.append(kwargs.pop(name))
        elif spec.default is not MISSING:
            values.append(spec.default)
        elif spec.default_factory is not MISSING:
            values.append(spec.default_factory())
        else:
            missing.append(repr(name))
    for name in kwargs:
        if any(name == taken for taken, _ in params):
            raise TypeError(f"{where} got multiple values for argument {name!r}")
        raise TypeError(f"{where} got an unexpected keyword argument {name!r}")
    if missing:
        listed = " and ".join(missing)
        if len(missing) > 2:
            listed = ", ".join(missing[:-1]) + ", and " + missing[-1]
        noun = "argument" if len(missing) == 1 else "arguments"
        raise TypeError(f"{where} missing {len(missing)} required positional {noun}: {listed}")
    return values


def _repr(names: tuple[str, ...]) -> Callable[[Any], str]:
    def __repr__(self: Any) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in names)
        return f"{self.__class__.__qualname__}({shown})"

    return __repr__


def _key(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """The tuple of `names`' values, as dataclass compares and hashes them."""
    if len(names) == 1:
        one = attrgetter(names[0])
        return lambda self: (one(self),)
    if not names:
        return lambda self: ()
    every: Callable[[Any], tuple[Any, ...]] = attrgetter(*names)
    return every


def _eq(names: tuple[str, ...]) -> Callable[[Any, Any], Any]:
    key = _key(names)

    def __eq__(self: Any, other: Any) -> Any:
        if other.__class__ is self.__class__:
            return key(self) == key(other)
        return NotImplemented

    return __eq__


def _hash(names: tuple[str, ...]) -> Callable[[Any], int]:
    key = _key(names)

    def __hash__(self: Any) -> int:
        return hash(key(self))

    return __hash__


def _frozen(
    cls: Any, fields: frozenset[str]
) -> tuple[Callable[[Any, str, Any], None], Callable[[Any, str], None]]:
    def __setattr__(self: Any, name: str, value: Any) -> None:
        if type(self) is cls or name in fields:
            raise FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    def __delattr__(self: Any, name: str) -> None:
        if type(self) is cls or name in fields:
            raise FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)

    return __setattr__, __delattr__


def _state(
    names: tuple[str, ...],
) -> tuple[Callable[[Any], list[Any]], Callable[[Any, list[Any]], None]]:
    def __getstate__(self: Any) -> list[Any]:
        return [getattr(self, name) for name in names]

    def __setstate__(self: Any, state: list[Any]) -> None:
        for name, value in zip(names, state, strict=True):
            object.__setattr__(self, name, value)

    return __getstate__, __setstate__


__all__ = [
    "HOT",
    "MISSING",
    "Field",
    "FrozenInstanceError",
    "compiled_init",
    "field",
    "record",
    "replace",
]
