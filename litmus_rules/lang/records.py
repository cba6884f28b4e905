"""Value classes without attrs: `@record` makes a slotted class of its annotated fields.

What attrs' `frozen` / `define` classes gave the project, and nothing more: an `__init__` taking the
fields in order (positionally or by name, defaults and factories for the last ones), equality and
hashing by the fields not marked `eq=False`, attrs' repr (`Name(a=1, b='x')`, fields marked
`repr=False` left out), immutability for frozen ones, pickling, `__match_args__`. `fields(cls)` and
`replace(obj, **changes)` stand in for `attrs.fields` and `attrs.evolve`.

Why not attrs: importing it (with `inspect`, `ast`, `dis`, `tokenize`, `platform`) and building a
class with it (generating and compiling its methods' source) was a third of the start of
`litmus-rules check one.yaml`. These classes are built from closures, once per class, no code
generated. A class that defines its own `__init__` keeps it: the ones built per episode on the hot
path spell theirs out, a plain assignment per field.
"""

from __future__ import annotations

from operator import attrgetter
from typing import Any, Callable, TypeVar

T = TypeVar("T")

NOTHING: Any = type("NOTHING", (), {"__repr__": lambda self: "NOTHING"})()


class Factory:
    """A default made anew for each instance (`field(factory=dict)`)."""

    __slots__ = ("make",)

    def __init__(self, make: Callable[[], Any]) -> None:
        self.make = make


class Field:
    """One field of a record class: what `attrs.fields` told of it (`type`: the annotation's text)."""

    __slots__ = ("name", "type", "eq", "repr", "default")

    def __init__(self, name: str, type: Any, eq: bool = True, repr: bool = True, default: Any = NOTHING) -> None:
        self.name, self.type, self.eq, self.repr, self.default = name, type, eq, repr, default

    def __repr__(self) -> str:
        return f"Field(name={self.name!r}, type={self.type!r})"


class _Spec:
    __slots__ = ("eq", "repr", "default")

    def __init__(self, eq: bool, repr: bool, default: Any) -> None:
        self.eq, self.repr, self.default = eq, repr, default


def field(*, default: Any = NOTHING, factory: Callable[[], Any] | None = None, eq: bool = True,
          repr: bool = True) -> Any:
    """A field's options, as its default in the class body (`x: int = field(eq=False)`)."""
    return _Spec(eq, repr, Factory(factory) if factory is not None else default)


class FrozenError(AttributeError):
    """A frozen record's field was assigned: records are values, shared freely."""


def _frozen_setattr(self: Any, name: str, value: Any) -> None:
    raise FrozenError(f"{type(self).__name__} is immutable")


def _frozen_delattr(self: Any, name: str) -> None:
    raise FrozenError(f"{type(self).__name__} is immutable")


def _repr(self: Any) -> str:
    shown = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in self.__record_fields__ if f.repr)
    return f"{type(self).__qualname__}({shown})"


def _reduce(self: Any) -> tuple[Any, ...]:
    return _rebuild, (type(self), tuple(getattr(self, f.name) for f in self.__record_fields__))


def _rebuild(cls: type, values: tuple[Any, ...]) -> Any:
    """Unpickling: the fields as they were, without `__init__` (whose checks the original passed)."""
    obj = object.__new__(cls)
    for f, value in zip(cls.__record_fields__, values):  # type: ignore[attr-defined]
        object.__setattr__(obj, f.name, value)
    return obj


def record(cls: type[T] | None = None, *, frozen: bool = True, eq: bool = True, repr: bool = True) -> Any:
    """The record class of `cls`'s own annotated fields, in order (those with a default last).

    `eq=False`: compared and hashed by identity, as attrs' `eq=False`."""

    def build(cls: type[T]) -> type[T]:
        body = dict(cls.__dict__)
        fields = []
        for name, annotation in body.pop("__annotations__", {}).items():
            spec = body.pop(name, NOTHING)
            if isinstance(spec, _Spec):
                fields.append(Field(name, annotation, spec.eq, spec.repr, spec.default))
            else:
                fields.append(Field(name, annotation, default=spec))
        body.pop("__dict__", None)
        body.pop("__weakref__", None)
        names = tuple(f.name for f in fields)
        body["__slots__"] = names
        body["__record_fields__"] = tuple(fields)
        body["__match_args__"] = names
        setters: list[Any] = []  # the slots' own setters, once the class exists
        body.setdefault("__init__", _init(cls.__name__, names, {f.name: f.default for f in fields
                                                                 if f.default is not NOTHING},
                                          "__post_init__" in body, setters))
        key = attrgetter(*[f.name for f in fields if f.eq]) if any(f.eq for f in fields) else (lambda _: ())

        def __eq__(self: Any, other: Any) -> Any:
            if other.__class__ is not self.__class__:
                return NotImplemented
            return key(self) == key(other)  # type: ignore[no-any-return]

        def __hash__(self: Any) -> int:
            return hash((names, key(self)))

        if eq:
            body["__eq__"] = __eq__
            body["__hash__"] = __hash__ if frozen else None  # as attrs: a mutable value is not hashable
        body["__reduce__"] = _reduce
        if repr and "__repr__" not in body:
            body["__repr__"] = _repr
        if frozen:
            body["__setattr__"], body["__delattr__"] = _frozen_setattr, _frozen_delattr
        made = type(cls.__name__, cls.__bases__, body)
        setters.extend(made.__dict__[name].__set__ for name in names)
        return made  # type: ignore[return-value]

    return build if cls is None else build(cls)


def _init(cls: str, names: tuple[str, ...], defaults: dict[str, Any], post: bool,
          setters: list[Any]) -> Callable[..., None]:
    count = len(names)

    if count == 2:  # (a text's forms: tens of thousands an episode; without the loop, 40% less)
        def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
            if kwargs or len(args) != 2:
                args = _bind(cls, names, defaults, args, kwargs)
            setters[0](self, args[0])
            setters[1](self, args[1])
    else:
        def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
            if kwargs or len(args) != count:
                args = _bind(cls, names, defaults, args, kwargs)
            # each slot's descriptor sets it (frozen records refuse `self.x = ...`): as fast as
            # attrs' generated __init__, twice object.__setattr__ by name
            for set_slot, value in zip(setters, args):
                set_slot(self, value)

    if not post:
        return __init__

    def __init_checked__(self: Any, *args: Any, **kwargs: Any) -> None:
        __init__(self, *args, **kwargs)
        self.__post_init__()

    return __init_checked__


def _bind(cls: str, names: tuple[str, ...], defaults: dict[str, Any], args: tuple[Any, ...],
          kwargs: dict[str, Any]) -> tuple[Any, ...]:
    if len(args) > len(names):
        raise TypeError(f"{cls}() takes {len(names)} arguments, {len(args)} given")
    values = dict(zip(names, args))
    for name, value in kwargs.items():
        if name not in names:
            raise TypeError(f"{cls}() got an unexpected keyword argument {name!r}")
        if name in values:
            raise TypeError(f"{cls}() got multiple values for argument {name!r}")
        values[name] = value
    missing = [n for n in names if n not in values and n not in defaults]
    if missing:
        raise TypeError(f"{cls}() missing required argument(s): {', '.join(missing)}")
    out = []
    for n in names:
        if n in values:
            out.append(values[n])
        else:
            default = defaults[n]
            out.append(default.make() if isinstance(default, Factory) else default)
    return tuple(out)


def is_record(cls: Any) -> bool:
    return isinstance(cls, type) and "__record_fields__" in cls.__dict__


def fields(cls: type) -> tuple[Field, ...]:
    """A record class's fields, in order (`attrs.fields`)."""
    if not is_record(cls):
        raise TypeError(f"{cls!r} is not a record class")
    return cls.__record_fields__  # type: ignore[attr-defined, no-any-return]


def replace(obj: T, **changes: Any) -> T:
    """A copy of `obj` with some fields changed (`attrs.evolve`), made by its `__init__`."""
    cls = type(obj)
    kept = {f.name: getattr(obj, f.name) for f in fields(cls) if f.name not in changes}
    return cls(**kept, **changes)
