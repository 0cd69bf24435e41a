"""heartsd: the Hearts Arena match daemon (grpc.aio).

The rules live in :mod:`hearts_engine`; this package adds the edges: the gRPC
services, bot sessions, the clock, match running, house bots and the store.

The decision path's encoders may be compiled (mypyc; see setup.py): :data:`COMPILED`
says whether they run compiled here, and ``HEARTSD_PURE=1`` in the environment runs the
Python sources instead. Both behave identically.
"""

from pathlib import Path as _Path

from hearts_engine._select import use_sources as _use_sources

__version__ = "0.1.0"

_HERE = _Path(__file__).parent
COMPILED: bool = (not _use_sources(__name__, _HERE, "HEARTSD_PURE", "pip install -e .")  # before any submodule
                  and (_HERE / "_compiled.json").is_file())
"""True when the compiled (mypyc) modules run, False for the Python sources."""
