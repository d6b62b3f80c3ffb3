"""snowmint: Snowflake-style 64-bit IDs (a Rust core, this package a thin binding).

- ``Generator``: thread-safe, lock-free and fork-aware, on the system clock.
- ``Layout``: which bits hold the time, the sequence and node fields (presets such
  as ``"twitter"``, ``"discord"``, ``"sonyflake"``, or a JSON descriptor);
  ``decode``/``compose``/``id_bounds``.
- String forms: ``to_base32``/``from_base32``, ``to_base62``/``from_base62``,
  ``format_id``/``parse_id``.
- Errors: ``SnowmintError`` (a ``ValueError``) with the cross-language ``.code``,
  one subclass per code (``InvalidIdError``...), and for an argument of the wrong
  type a subclass of that which is also a ``TypeError`` (``InvalidIdTypeError``...).

Everything is implemented in the extension module ``snowmint._snowmint``; this
file only re-exports it.
"""

from ._snowmint import *  # noqa: F401,F403
from ._snowmint import __all__  # noqa: F401
