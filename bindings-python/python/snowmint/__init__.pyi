"""Type stubs for snowmint (the extension module snowmint._snowmint, re-exported)."""

from datetime import datetime
from types import TracebackType
from typing import (
    Callable,
    Dict,
    Iterator,
    List,
    Literal,
    Mapping,
    NoReturn,
    Optional,
    SupportsIndex,
    Tuple,
    Type,
    Union,
    final,
)

__version__: str
ERROR_CODES: List[str]
"""Every error code, in the core's fixed order."""

_LayoutLike = Union["Layout", str]
"""A Layout, a preset name ("twitter", ...) or a JSON descriptor."""
_IdLike = Union[int, str]
"""An ID: an int in 0..2**64, or its decimal str (a float that is a whole number of at most
2**53 - 1 is accepted too)."""
_TimeLike = Union[int, datetime]
"""Unix milliseconds, or an aware datetime."""

class SnowmintError(ValueError):
    """The base of every snowmint error."""

    code: Optional[str]
    """The core's stable error code (the same in every language)."""

class InvalidLayoutError(SnowmintError):
    """code ``invalid_layout``: the layout or its JSON descriptor is not acceptable."""

    code: str

class UnknownPresetError(SnowmintError):
    """code ``unknown_preset``: no preset has this name."""

    code: str

class UnknownFieldError(SnowmintError):
    """code ``unknown_field``: a node value for a field the layout does not have."""

    code: str

class MissingNodeError(SnowmintError):
    """code ``missing_node``: a node field without a value."""

    code: str

class NodeOutOfRangeError(SnowmintError):
    """code ``node_out_of_range``: a value does not fit its field."""

    code: str

class InvalidOptionError(SnowmintError):
    """code ``invalid_option``: a generator option (policy, count, seed) is not acceptable."""

    code: str

class TimeBeforeEpochError(SnowmintError):
    """code ``time_before_epoch``: a time is before the layout's epoch."""

    code: str

class TimeOverflowError(SnowmintError):
    """code ``time_overflow``: a time is at or past the end of the layout's time field."""

    code: str

class ClockMovedBackwardsError(SnowmintError):
    """code ``clock_moved_backwards``: the clock went back further than the policy tolerates."""

    code: str

class InvalidIdError(SnowmintError):
    """code ``invalid_id``: not a valid ID (for this layout)."""

    code: str

class ProcessForkedError(SnowmintError):
    """code ``process_forked``: a generator created before fork() used in the child."""

    code: str

class LeaseUnavailableError(SnowmintError):
    """code ``lease_unavailable``: no lease could be had (store unreachable, every slot held, clocks too far apart)."""

    code: str

class LeaseExpiredError(SnowmintError):
    """code ``lease_expired``: no ID past the reservation the lease's store confirmed
    (the store unreachable), or the lease was lost or closed."""

    code: str

class LeaseFencedError(SnowmintError):
    """code ``lease_fenced``: the lease's slot is fenced until a later time (the store may
    have forgotten, or a previous holder reserved it); the clock is fine: wait."""

    code: str

class ClockStalledError(SnowmintError):
    """code ``clock_stalled``: the generator had to wait for the next time unit and the clock
    did not advance at all (a clock that stands still)."""

    code: str

# For an argument of the wrong type, each code's class has a subclass that is
# also a TypeError (ErrorClass::Type in the core); it is the one raised then.
class InvalidLayoutTypeError(InvalidLayoutError, TypeError): ...
class UnknownPresetTypeError(UnknownPresetError, TypeError): ...
class UnknownFieldTypeError(UnknownFieldError, TypeError): ...
class MissingNodeTypeError(MissingNodeError, TypeError): ...
class NodeOutOfRangeTypeError(NodeOutOfRangeError, TypeError): ...
class InvalidOptionTypeError(InvalidOptionError, TypeError): ...
class TimeBeforeEpochTypeError(TimeBeforeEpochError, TypeError): ...
class TimeOverflowTypeError(TimeOverflowError, TypeError): ...
class ClockMovedBackwardsTypeError(ClockMovedBackwardsError, TypeError): ...
class InvalidIdTypeError(InvalidIdError, TypeError): ...
class ProcessForkedTypeError(ProcessForkedError, TypeError): ...
class LeaseUnavailableTypeError(LeaseUnavailableError, TypeError): ...
class LeaseExpiredTypeError(LeaseExpiredError, TypeError): ...
class LeaseFencedTypeError(LeaseFencedError, TypeError): ...
class ClockStalledTypeError(ClockStalledError, TypeError): ...

# The classes are pyo3 classes, which cannot be subclassed (@final).

@final
class Field:
    """One field of a layout."""

    @property
    def name(self) -> str:
        """The field's name."""
    @property
    def bits(self) -> int:
        """Width in bits."""
    @property
    def shift(self) -> int:
        """Position of the field's lowest bit in the ID."""
    @property
    def kind(self) -> Literal["timestamp", "sequence", "node"]:
        """What the field holds."""
    def __eq__(self, other: object, /) -> bool: ...
    def __hash__(self) -> int: ...

@final
class Layout:
    """A layout: the epoch, the time unit, and the fields from the most significant bit down.

    ``Layout(layout)`` takes what every ``layout`` argument takes: a preset name, a JSON
    descriptor or a Layout. Pickles and copies as ``Layout(preset name or descriptor)``.
    """

    def __new__(cls, layout: _LayoutLike) -> Layout: ...
    def __reduce__(self) -> Tuple[Type[Layout], Tuple[str]]: ...

    @staticmethod
    def preset(name: str) -> Layout:
        """A preset by name (see ``Layout.presets()``)."""
    @staticmethod
    def from_json(json: str) -> Layout:
        """A layout from its JSON descriptor (or a preset's name as a JSON string)."""
    @staticmethod
    def parse(s: str) -> Layout:
        """A JSON descriptor (starting with ``{`` or ``"``) or else a preset name."""
    @staticmethod
    def presets() -> List[str]:
        """The names of the presets, in a fixed order."""
    def to_json(self) -> str:
        """The canonical JSON descriptor."""
    @property
    def epoch_ms(self) -> int:
        """The epoch, Unix milliseconds."""
    @property
    def time_unit_ms(self) -> int:
        """The time unit in milliseconds."""
    @property
    def total_bits(self) -> int:
        """The width of the IDs in bits."""
    @property
    def max_id(self) -> int:
        """The largest ID of the layout."""
    @property
    def fields(self) -> List[Field]:
        """The fields, most significant first."""
    @property
    def node_names(self) -> List[str]:
        """The names of the node fields, in order."""
    @property
    def time_end_ms(self) -> int:
        """The first Unix ms the time field cannot hold."""
    @property
    def time_end(self) -> Optional[datetime]:
        """``time_end_ms`` as an aware UTC datetime (None past year 9999)."""
    @property
    def i64_end_ms(self) -> int:
        """The first Unix ms from which IDs may not fit a signed 64-bit integer."""
    @property
    def i64_end(self) -> Optional[datetime]:
        """``i64_end_ms`` as an aware UTC datetime (None past year 9999)."""
    @property
    def js_safe_end_ms(self) -> int:
        """The first Unix ms from which IDs may exceed 2**53."""
    @property
    def js_safe_end(self) -> Optional[datetime]:
        """``js_safe_end_ms`` as an aware UTC datetime (None past year 9999)."""
    @property
    def preset_name(self) -> Optional[str]:
        """The name of the preset equal to this layout, or None."""
    def decode(self, id: _IdLike) -> Parts:
        """Splits an ID into its parts."""
    def compose(self, timestamp_ms: int, sequence: int = 0, **nodes: int) -> int:
        """Builds an ID from a time (Unix ms), a sequence value and node values."""
    def id_bounds(self, time: _TimeLike) -> Tuple[int, int]:
        """The smallest and largest IDs whose time unit contains ``time``."""
    def is_plausible(self, id: _IdLike, now_ms: int) -> bool:
        """True when the ID fits and decodes to a time between the epoch and now plus one day."""
    def __eq__(self, other: object, /) -> bool: ...
    def __hash__(self) -> int: ...

@final
class Parts:
    """An ID split into its parts; iterates like ``(id, timestamp_ms, sequence, nodes)``.

    Node fields are also attributes (``parts.worker``). Pickles and copies as
    ``decode(id, layout)``.
    """

    @property
    def id(self) -> int:
        """The ID."""
    @property
    def timestamp_ms(self) -> int:
        """The start of the ID's time unit, Unix milliseconds."""
    @property
    def time(self) -> datetime:
        """``timestamp_ms`` as an aware UTC datetime (OverflowError past year 9999)."""
    @property
    def tick(self) -> int:
        """The time field's raw value (time units since the epoch)."""
    @property
    def sequence(self) -> int:
        """The sequence value."""
    @property
    def nodes(self) -> Dict[str, int]:
        """The node values by field name (a new dict each time)."""
    @property
    def layout(self) -> Layout:
        """The layout the ID was decoded with."""
    def _asdict(self) -> Dict[str, object]:
        """The parts as a dict."""
    def __getattr__(self, name: str) -> int:
        """A node field's value."""
    def __reduce__(self) -> Tuple[Callable[[int, Layout], Parts], Tuple[int, Layout]]: ...
    def __len__(self) -> int: ...
    def __getitem__(self, key: int, /) -> object: ...
    def __iter__(self) -> Iterator[object]: ...
    def __eq__(self, other: object, /) -> bool: ...
    def __hash__(self) -> int: ...

@final
class Generator:
    """The thread-safe, lock-free generator on the system clock.

    Node values are keyword arguments named after the layout's node fields (or a
    ``nodes`` dict). Generators of one process with the same layout and node values
    share one state. A generator created before ``fork()`` raises
    ``ProcessForkedError`` in the child: create a new one there, with a node value
    no other process uses.

    With ``lease="file:/var/lib/myapp/ids"`` (a lease URL, see docs/SEMANTICS.md
    "Leases"), leave out one node field: a store assigns its value, one holder per
    value (``LeaseUnavailableError`` when none is free). ``close()``, the end of a
    ``with`` block or garbage collection releases it; after ``close()``,
    ``next_id`` raises ``LeaseExpiredError``.

    Pickling or copying one raises ``TypeError``: two copies would issue duplicate IDs.
    """

    def __new__(
        cls,
        layout: _LayoutLike = "twitter",
        *,
        clock_backwards: Optional[str] = None,
        sequence_exhausted: Optional[str] = None,
        sequence_start: Optional[str] = None,
        seed: Optional[int] = None,
        resume_after: Optional[_IdLike] = None,
        lease: Optional[str] = None,
        nodes: Optional[Mapping[str, int]] = None,
        **node_values: int,
    ) -> Generator: ...
    def next_id(self) -> int:
        """The next ID. Waits (with the GIL released) when a policy says to."""
    def next_ids(self, n: int) -> List[int]:
        """``n`` increasing IDs (1 to 2**32) from one core call."""
    @property
    def layout(self) -> Layout:
        """The layout."""
    @property
    def nodes(self) -> Dict[str, int]:
        """The node values by field name (the leased one included)."""
    @property
    def lease(self) -> Optional[Dict[str, Union[int, str, None]]]:
        """The lease's state as a new dict, or None without a lease. Keys: ``store``,
        ``field``, ``slot`` (the leased value), ``claim``, ``hwm_ms``,
        ``reserved_until_ms``, ``expires_ms`` (None: never while the process lives),
        ``renewals``, ``confirmed_at_ms``, ``skew_ms`` (None: not measured yet), ``timeouts``,
        ``lost``, ``last_error`` (str or None), ``space``."""
    def close(self) -> None:
        """Releases the lease; then ``next_id`` raises ``LeaseExpiredError``. A second
        call, or a call without a lease, does nothing."""
    def __enter__(self) -> Generator: ...
    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc_value: Optional[BaseException],
        traceback: Optional[TracebackType],
    ) -> None:
        """Closes the generator (see ``close``); an exception in the block propagates."""
    def __iter__(self) -> Iterator[int]: ...
    def __next__(self) -> int: ...
    def __reduce__(self) -> NoReturn:
        """Refused: ``TypeError`` (two copies would issue duplicate IDs)."""
    def __reduce_ex__(self, protocol: SupportsIndex, /) -> NoReturn:
        """Refused: ``TypeError`` (two copies would issue duplicate IDs)."""
    def __copy__(self) -> NoReturn:
        """Refused: ``TypeError`` (two copies would issue duplicate IDs)."""
    def __deepcopy__(self, memo: object, /) -> NoReturn:
        """Refused: ``TypeError`` (two copies would issue duplicate IDs)."""

@final
class PureGenerator:
    """The core's pure generator: the caller passes the time (for tests and simulations)."""

    def __new__(
        cls,
        layout: _LayoutLike,
        *,
        clock_backwards: Optional[str] = None,
        sequence_exhausted: Optional[str] = None,
        sequence_start: Optional[str] = None,
        seed: Optional[int] = 0,
        resume_after: Optional[_IdLike] = None,
        nodes: Optional[Mapping[str, int]] = None,
        **node_values: int,
    ) -> PureGenerator: ...
    def next(self, now_ms: int) -> Tuple[Literal["id", "retry_at"], int]:
        """``("id", id)``, or ``("retry_at", ms)`` when no ID can be issued before ``ms``."""
    def reserve_until(self, until_ms: Optional[int]) -> None:
        """IDs only in time units up to the one holding ``until_ms`` (a lease's confirmed
        reservation), ``LeaseExpiredError`` past it; ``None`` removes the bound."""
    @property
    def layout(self) -> Layout:
        """The layout."""
    @property
    def nodes(self) -> Dict[str, int]:
        """The node values by field name."""

@final
class IdMask:
    """Public IDs: a keyed, reversible mask over a layout's IDs (NIST SP 800-38G FF1 with
    AES-128 for a 16-byte key, AES-256 for a 32-byte key). ``mask(id)`` is the public ID, an
    ID of the same layout; ``unmask(public)`` gives the ID back. ``key`` and ``tweak`` as bytes
    or hex str; a key of another length raises ``InvalidOptionError``, a layout of fewer than
    20 bits ``InvalidLayoutError``. The repr never shows the key."""

    def __new__(
        cls,
        layout: _LayoutLike,
        key: Union[bytes, bytearray, str],
        tweak: Union[bytes, bytearray, str] = b"",
    ) -> IdMask: ...
    def mask(self, id: _IdLike) -> int:
        """The public ID of ``id``; ``InvalidIdError`` when it has bits above the layout's width."""
    def unmask(self, public: _IdLike) -> int:
        """The ID whose public ID is ``public``; ``InvalidIdError`` when it has bits above the
        layout's width."""
    @property
    def layout(self) -> Layout:
        """The layout whose IDs this mask permutes."""
    @property
    def tweak(self) -> bytes:
        """The tweak's bytes (a tweak is not a secret)."""

def decode(id: _IdLike, layout: _LayoutLike = "twitter") -> Parts:
    """Splits an ID into its parts under ``layout``."""

def compose(layout: _LayoutLike, timestamp_ms: int, sequence: int = 0, **nodes: int) -> int:
    """Builds an ID from a time (Unix ms), a sequence value and node values."""

def id_bounds(layout: _LayoutLike, time: _TimeLike) -> Tuple[int, int]:
    """The smallest and largest IDs whose time unit contains ``time``, for range queries."""

def to_base32(id: _IdLike) -> str:
    """The ID in Crockford base32 (13 characters, upper case)."""

def from_base32(s: str) -> int:
    """Reads a Crockford base32 ID."""

def to_base62(id: _IdLike) -> str:
    """The ID in base62 (11 characters, 0-9A-Za-z)."""

def from_base62(s: str) -> int:
    """Reads a base62 ID."""

def format_id(id: _IdLike, format: Literal["decimal", "base32", "base62"]) -> str:
    """The ID as a string in ``format``."""

def parse_id(s: str, format: Literal["decimal", "base32", "base62"]) -> int:
    """Reads an ID written in ``format``."""

__all__ = [
    "ClockMovedBackwardsError",
    "ClockMovedBackwardsTypeError",
    "ClockStalledError",
    "ClockStalledTypeError",
    "ERROR_CODES",
    "Field",
    "Generator",
    "IdMask",
    "InvalidIdError",
    "InvalidIdTypeError",
    "InvalidLayoutError",
    "InvalidLayoutTypeError",
    "InvalidOptionError",
    "InvalidOptionTypeError",
    "Layout",
    "LeaseExpiredError",
    "LeaseExpiredTypeError",
    "LeaseFencedError",
    "LeaseFencedTypeError",
    "LeaseUnavailableError",
    "LeaseUnavailableTypeError",
    "MissingNodeError",
    "MissingNodeTypeError",
    "NodeOutOfRangeError",
    "NodeOutOfRangeTypeError",
    "Parts",
    "ProcessForkedError",
    "ProcessForkedTypeError",
    "PureGenerator",
    "SnowmintError",
    "TimeBeforeEpochError",
    "TimeBeforeEpochTypeError",
    "TimeOverflowError",
    "TimeOverflowTypeError",
    "UnknownFieldError",
    "UnknownFieldTypeError",
    "UnknownPresetError",
    "UnknownPresetTypeError",
    "compose",
    "decode",
    "format_id",
    "from_base32",
    "from_base62",
    "id_bounds",
    "parse_id",
    "to_base32",
    "to_base62",
    "__version__",
]
