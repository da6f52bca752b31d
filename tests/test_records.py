"""`signoff.records.record` makes the class `dataclasses.dataclass` makes, without exec:
each behaviour is compared with a twin made by `dataclass` from the same body."""

from __future__ import annotations

import copy
import dataclasses
import importlib
import pickle
import pkgutil
from typing import Any

import pytest

import signoff
from signoff import _records, records


def _sample(decorate: Any, field: Any, *, frozen: bool, slots: bool) -> Any:
    @decorate(frozen=frozen, slots=slots)
    class Sample:
        """A record with each kind of field signoff uses."""

        name: str
        count: int = 0
        note: str | None = None
        tags: list[str] = field(default_factory=list)
        hidden: str = field(default="h", repr=False)
        loose: float = field(default=1.5, compare=False)
        worked_out: str = field(init=False, default="", repr=False, compare=False)

        def __post_init__(self) -> None:
            if self.count < 0:
                raise ValueError("count must not be negative")
            object.__setattr__(self, "worked_out", self.name.upper())

        def twice(self) -> int:
            return self.count * 2

    return Sample


KINDS = [(frozen, slots) for frozen in (False, True) for slots in (False, True)]


def _pair(frozen: bool, slots: bool, compiled: bool = False) -> tuple[Any, Any]:
    """The record and its dataclass twin; `compiled`: the record's `__init__` as a
    long-lived process has it once the class made `HOT` instances."""
    ours = _sample(records.record, records.field, frozen=frozen, slots=slots)
    if compiled:
        ours.__init__ = _records.compiled_init(ours)
    theirs = _sample(dataclasses.dataclass, dataclasses.field, frozen=frozen, slots=slots)
    return ours, theirs


CALLS: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
    (("a",), {}),
    (("a", 2), {}),
    (("a", 2, "n", ["t"], "x", 2.5), {}),
    ((), {"name": "a", "tags": ["t"]}),
    (("a",), {"loose": 9.0, "count": 3}),
    ((), {}),  # missing the required field
    (("a", 1, "n", [], "x", 1.0, "extra"), {}),  # too many
    (("a",), {"name": "b"}),  # twice
    (("a",), {"worked_out": "x"}),  # not an argument of __init__
    (("a",), {"colour": "red"}),
    (("a", -1), {}),  # __post_init__ refuses it
]


def _outcome(cls: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    try:
        made = cls(*args, **kwargs)
    except (TypeError, ValueError) as exc:
        return type(exc), str(exc)
    return repr(made), made.worked_out, made.twice()


@pytest.mark.parametrize("compiled", [False, True])
@pytest.mark.parametrize(("frozen", "slots"), KINDS)
@pytest.mark.parametrize(("args", "kwargs"), CALLS)
def test_init_takes_and_refuses_what_dataclass_s_does(
    frozen: bool, slots: bool, compiled: bool, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    ours, theirs = _pair(frozen, slots, compiled)
    assert _outcome(ours, args, kwargs) == _outcome(theirs, args, kwargs)


@pytest.mark.parametrize(("frozen", "slots"), KINDS)
def test_a_class_made_often_gets_its_init_compiled_with_the_same_results(
    frozen: bool, slots: bool
) -> None:
    ours, theirs = _pair(frozen, slots)
    first = ours.__init__
    made = [ours(f"n{n}", n, tags=[str(n)]) for n in range(_records.HOT + 1)]
    assert (
        ours.__init__ is not first
        and ours.__init__.__qualname__ == "_sample.<locals>.Sample.__init__"
    )
    again = [ours(f"n{n}", n, tags=[str(n)]) for n in range(3)]
    assert [repr(m) for m in made[:3]] == [repr(m) for m in again]
    assert [repr(m) for m in again] == [repr(theirs(f"n{n}", n, tags=[str(n)])) for n in range(3)]
    assert again[0].worked_out == "N0" and again[0].tags is not again[1].tags


@pytest.mark.parametrize(("frozen", "slots"), KINDS)
def test_equality_hash_repr_and_defaults_as_dataclass_s(frozen: bool, slots: bool) -> None:
    ours, theirs = _pair(frozen, slots)
    for cls in (ours, theirs):
        a, b = cls("a", 1, loose=1.0), cls("a", 1, loose=2.0)  # loose is not compared
        assert a == b and a != cls("a", 2) and a != ("a", 1)
        assert cls("a").tags is not cls("a").tags  # a fresh list each
    assert repr(ours("a", tags=["x"])) == repr(theirs("a", tags=["x"]))
    assert ours.__match_args__ == theirs.__match_args__
    assert hasattr(ours, "__slots__") == hasattr(theirs, "__slots__") == slots
    if slots:
        assert ours.__slots__ == theirs.__slots__
    else:  # class attributes: a default stays, a factory's field does not
        assert (ours.count, ours.hidden, ours.worked_out) == (0, "h", "")
        assert not hasattr(ours, "tags") and not hasattr(theirs, "tags")
    if frozen:
        ours_made, twin = ours("a", 1, tags=(), loose=1.0), theirs("a", 1, tags=(), loose=7.0)
        assert hash(ours_made) == hash(twin)  # the list field makes it unhashable otherwise
    else:
        assert ours.__hash__ is None and theirs.__hash__ is None


@pytest.mark.parametrize(("frozen", "slots"), KINDS)
def test_frozen_refuses_assignment_as_dataclass_does(frozen: bool, slots: bool) -> None:
    ours, theirs = _pair(frozen, slots)
    for cls in (ours, theirs):
        made = cls("a")
        if frozen:
            with pytest.raises(AttributeError, match="cannot assign to field 'count'"):
                made.count = 3
            with pytest.raises(AttributeError, match="cannot delete field 'name'"):
                del made.name
        else:
            made.count = 3
            assert made.count == 3
        if slots:
            with pytest.raises((AttributeError, TypeError)):
                made.other = 1
    if frozen:
        assert issubclass(records.FrozenInstanceError, AttributeError)


@pytest.mark.parametrize(("frozen", "slots"), KINDS)
def test_dataclasses_functions_work_on_a_record(frozen: bool, slots: bool) -> None:
    ours, theirs = _pair(frozen, slots)
    assert dataclasses.is_dataclass(ours) and dataclasses.is_dataclass(ours("a"))

    def described(cls: Any) -> list[tuple[Any, ...]]:
        return [
            (f.name, f.type, f.default, f.default_factory, f.init, f.repr, f.compare, f.hash)
            for f in dataclasses.fields(cls)
        ]

    assert described(ours) == described(theirs)
    assert ours.__dataclass_params__.frozen is frozen  # worked out once, then kept
    assert "__dataclass_fields__" in ours.__dict__
    made, twin = ours("a", 2, tags=["t"]), theirs("a", 2, tags=["t"])
    assert dataclasses.asdict(made) == dataclasses.asdict(twin)
    assert dataclasses.astuple(made) == dataclasses.astuple(twin)
    for replace in (dataclasses.replace, records.replace):
        changed = replace(made, count=5)
        assert type(changed) is ours and changed.count == 5 and changed.tags == ["t"]
        assert changed.worked_out == "A"  # through __init__ and __post_init__
        with pytest.raises(ValueError, match="init=False"):
            replace(made, worked_out="x")
        with pytest.raises(ValueError, match="negative"):
            replace(made, count=-1)
    assert records.replace(twin, count=5) == dataclasses.replace(twin, count=5)


@pytest.mark.parametrize(("frozen", "slots"), KINDS)
def test_copies_and_pickles_as_dataclass_s(frozen: bool, slots: bool) -> None:
    ours, _ = _pair(frozen, slots)
    made = ours("a", 2, tags=["t"])
    assert copy.copy(made) == made and copy.deepcopy(made) == made
    assert copy.deepcopy(made).tags is not made.tags
    globals()["Sample"] = ours  # pickle finds a class by its module and name
    ours.__qualname__ = "Sample"
    try:
        again = pickle.loads(pickle.dumps(made))
        assert again == made and again.worked_out == "A"
    finally:
        del globals()["Sample"]


def test_what_a_record_does_not_support_is_refused() -> None:
    with pytest.raises(ValueError, match="mutable default"):

        @records.record
        class Listed:
            items: list[str] = []  # noqa: RUF012

    with pytest.raises(TypeError, match="non-default argument 'b'"):

        @records.record
        class Ordered:
            a: int = 0
            b: int

    with pytest.raises(TypeError, match="ClassVar"):

        @records.record
        class Shared:
            count: ClassVar[int] = 0  # type: ignore[name-defined]  # noqa: F821

    @records.record
    class Base:
        a: int = 0

    with pytest.raises(TypeError, match="does not inherit"):

        @records.record
        class Derived(Base):
            b: int = 0


def _record_classes() -> list[type]:
    found: dict[str, type] = {}
    for module in pkgutil.walk_packages(signoff.__path__, "signoff."):
        if module.name.endswith("__main__"):  # runs the command line
            continue
        try:
            loaded = importlib.import_module(module.name)
        except ImportError:  # an adapter whose framework is not installed
            continue
        for value in vars(loaded).values():
            if isinstance(value, type) and "_record_fields" in value.__dict__:
                found[f"{value.__module__}.{value.__qualname__}"] = value
    return [found[name] for name in sorted(found)]


def test_signoff_s_records_are_dataclasses_to_everyone_else() -> None:
    """Every record class of the package: its fields as `dataclass` reads the same body."""
    classes = _record_classes()
    assert len(classes) > 30
    names = {cls.__qualname__ for cls in classes}
    assert {"ToolCall", "Verdict", "Request", "Settings", "Event", "ToolSpec"} <= names
    for cls in classes:
        fields = dataclasses.fields(cls)
        assert [f.name for f in fields] == [name for name, _ in cls._record_fields]  # type: ignore[attr-defined]
        assert cls.__match_args__ == tuple(f.name for f in fields if f.init)  # type: ignore[attr-defined]
