"""Stored fits with the format they were written in: pool fits (EBR's densities, IBR's
encoder) and fitted recourse methods (a study's generating design parts).

A fit is pickled, and a pickle names the classes it holds: once a class moves or changes
its fields, an old pickle fails to load or loads wrong. So every stored fit starts with a
header naming its strategy's `PoolFit.format`; a blob of another format, without a header,
or whose payload no longer unpickles raises `StaleFit`, and the caller fits again instead
of keeping compatibility shims for every past layout.

Blob: `recourse-fit <format>\\n` then the pickle (for a method, of the method and its
schema's hash, so a fit is never used on another schema). Load blobs only from storage the
platform itself wrote (a pickle can run code).
"""

from __future__ import annotations

import pickle
from typing import TYPE_CHECKING, Any

from .methods.base import MethodError
from .strategies import PoolFit, get_strategy

if TYPE_CHECKING:
    from .methods.base import RecourseMethod
    from .schema import FeatureSchema

MAGIC = b"recourse-fit "

#: what a payload raises when a class it names has moved or changed, or it is damaged
_UNPICKLE_ERRORS = (
    ImportError,
    AttributeError,
    EOFError,
    TypeError,
    IndexError,
    pickle.UnpicklingError,
)


class StaleFit(MethodError):
    """A stored fit this engine cannot use (another format, or classes that moved): fit
    again."""


def _pool_fit(strategy: str) -> PoolFit:
    entry = get_strategy(strategy)
    if entry.pool_fit is None:
        raise MethodError(f"strategy {strategy!r} fits nothing on the pool")
    return entry.pool_fit


def fit_format(strategy: str) -> str:
    """The format this engine writes and reads for the strategy's fit (for cache keys)."""
    return _pool_fit(strategy).format


def dump_fit(strategy: str, fitted: Any) -> bytes:
    """The fitted object as bytes: the format header, then the pickle."""
    header = MAGIC + fit_format(strategy).encode() + b"\n"
    return header + pickle.dumps(fitted, protocol=pickle.HIGHEST_PROTOCOL)


def load_fit(strategy: str, blob: bytes | bytearray | memoryview) -> Any:
    """The fitted object stored by `dump_fit`; raises StaleFit when it cannot be used
    (written in another format or before fits were versioned, or naming classes that moved
    or changed): the caller fits again."""
    expected = fit_format(strategy)
    blob = bytes(blob)
    head, sep, payload = blob.partition(b"\n")
    if not sep or not head.startswith(MAGIC):
        raise StaleFit(
            f"{strategy}: stored fit has no format header (written before fits were versioned)"
        )
    found = head[len(MAGIC) :].decode("utf-8", errors="replace")
    if found != expected:
        raise StaleFit(f"{strategy}: stored fit is {found!r}; this engine reads {expected!r}")
    try:
        return pickle.loads(payload)
    except _UNPICKLE_ERRORS as exc:
        raise StaleFit(f"{strategy}: stored fit of {expected!r} does not load ({exc})") from None


# ---------------------------------------------------------------------------------------
# fitted recourse methods (a study's generating design parts)

#: the layout of a stored fitted method; changes when `RecourseMethod`'s pickled state does
METHOD_FORMAT_VERSION = 1


def method_fit_format(name: str) -> str:
    """The format this engine writes and reads for a fitted method of this name."""
    return f"method:{name}/{METHOD_FORMAT_VERSION}"


def dump_method(method: RecourseMethod) -> bytes:
    """A fitted method as bytes: the format header, then a pickle of the method and the hash
    of the schema it was fitted on."""
    if not hasattr(method, "model"):
        raise MethodError(f"{method.name}: only a fitted method can be stored")
    header = MAGIC + method_fit_format(method.name).encode() + b"\n"
    payload = {"schema_hash": method.schema.hash(), "method": method}
    return header + pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL)


def load_method(
    name: str, blob: bytes | bytearray | memoryview, schema: FeatureSchema
) -> RecourseMethod:
    """The fitted method stored by `dump_method`; StaleFit when it cannot be used (another
    format, classes that moved, another method or schema): the caller fits again."""
    from .methods.base import RecourseMethod

    expected = method_fit_format(name)
    head, sep, payload = bytes(blob).partition(b"\n")
    if not sep or not head.startswith(MAGIC):
        raise StaleFit(f"{name}: stored method has no format header")
    found = head[len(MAGIC) :].decode("utf-8", errors="replace")
    if found != expected:
        raise StaleFit(f"{name}: stored method is {found!r}; this engine reads {expected!r}")
    try:
        data = pickle.loads(payload)
    except _UNPICKLE_ERRORS as exc:
        raise StaleFit(f"{name}: stored method of {expected!r} does not load ({exc})") from None
    method = data.get("method") if isinstance(data, dict) else None
    if not isinstance(method, RecourseMethod) or method.name != name:
        raise StaleFit(f"{name}: the stored blob holds no fitted {name} method")
    if data.get("schema_hash") != schema.hash():
        raise StaleFit(f"{name}: stored method was fitted on another schema")
    return method
