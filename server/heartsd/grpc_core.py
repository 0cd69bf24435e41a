"""Settings of gRPC's C core that must be in place before the core loads.

The core reads ``GRPC_EXPERIMENTS`` once, when ``grpc`` is first imported, so the daemon
puts its ``grpc_experiments`` setting there before its first gRPC import (cli.py), unless
the environment already names experiments: then those win, as gRPC documents.

The default, ``-event_engine_listener``, serves the port through gRPC's epoll poller
(iomgr) instead of its newer EventEngine listener. On the README's 2-core machine it gave
heartsd 14% more decisions/s, and the bare ping-pong floor 8% (``python bench/server.py``
runs the floor with the daemon's setting, so its ratio compares like with like); the
suite passes on either (``GRPC_EXPERIMENTS=`` runs it on gRPC's own default). ``""``
leaves gRPC's defaults alone. Experiments are gRPC's, and a later gRPC may drop one: an
unknown name is logged by gRPC at start and otherwise ignored.

>>> env = {}
>>> apply_experiments("-event_engine_listener", env, grpc_loaded=False)
('-event_engine_listener', True)
>>> env
{'GRPC_EXPERIMENTS': '-event_engine_listener'}
>>> apply_experiments("", {"GRPC_EXPERIMENTS": "event_engine_poller"}, grpc_loaded=False)
('event_engine_poller', False)
"""

from __future__ import annotations

import re
import sys
from collections.abc import MutableMapping

ENV = "GRPC_EXPERIMENTS"
DEFAULT_EXPERIMENTS = "-event_engine_listener"
_NAMES = re.compile(r"(-?[a-z0-9_]+)(,-?[a-z0-9_]+)*")


def experiments_problem(value: str) -> str | None:
    """Why ``value`` is not a list of experiments (``name`` on, ``-name`` off, commas
    between), or None."""
    if value == "" or _NAMES.fullmatch(value):
        return None
    return f"comma-separated gRPC experiment names, each optionally after '-' (off), e.g. {DEFAULT_EXPERIMENTS!r}"


def apply_experiments(experiments: str, environ: MutableMapping[str, str],
                      grpc_loaded: bool | None = None) -> tuple[str, bool]:
    """Set ``experiments`` as this process's gRPC experiments if nothing else decided them:
    the value in effect, and whether it is ``experiments``. The environment's own value
    wins, and once the core has loaded nothing changes (``grpc_loaded``: whether it has,
    by default from ``sys.modules``)."""
    if grpc_loaded is None:
        grpc_loaded = "grpc._cython.cygrpc" in sys.modules
    if ENV in environ or grpc_loaded or not experiments:
        current = environ.get(ENV, "")
        return current, current == experiments
    environ[ENV] = experiments
    return experiments, True
