"""heartsd: the Hearts Arena match daemon (grpc.aio).

The rules live in :mod:`hearts_engine`; this package adds the edges: the gRPC
services, bot sessions, the clock, match running, house bots and the store.
"""

__version__ = "0.1.0"
