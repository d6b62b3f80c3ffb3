"""snowmint: Snowflake-style 64-bit IDs (a Rust core, this package a thin binding).

- ``Generator`` (thread-safe, lock-free, fork-aware) and ``PureGenerator`` (time passed in).
- ``Layout``: presets (``"twitter"``, ``"discord"``, ...) or a JSON descriptor;
  ``decode``/``compose``/``id_bounds``; string forms ``to_base32``, ``format_id``...
- Errors: ``SnowmintError`` (a ``ValueError``) with the cross-language ``.code``, one
  subclass per code (``InvalidIdError``) and, for an argument of the wrong type, its
  subclass that is also a ``TypeError`` (``InvalidIdTypeError``).

Everything is in the extension module ``snowmint._snowmint``; this file re-exports it.
"""

from ._snowmint import *  # noqa: F401,F403
from ._snowmint import __all__  # noqa: F401
