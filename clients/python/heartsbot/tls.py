"""TLS for the clients: the same four options in every client (``--tls``, ``--ca FILE``,
``--cert FILE``, ``--key FILE``) and the channel they open.

``--tls`` trusts the system's certificate authorities; ``--ca FILE`` (which implies
``--tls``) trusts that PEM CA instead, e.g. an organiser's own; ``--cert`` and ``--key``
present a client certificate, for a server that requires one (mutual TLS).

>>> Tls.from_options(tls=False) is None
True
>>> Tls.from_options(tls=False, cert="c.pem")
Traceback (most recent call last):
...
ValueError: --cert and --key go together (a client certificate and its key)
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import grpc
# grpc itself is imported where a channel is made: parsing options (every command's, and
# heartsd serve's before it sets gRPC's experiments, heartsd/grpc_core.py) must not load
# gRPC's core, which reads its configuration once, as it loads.


@dataclass(frozen=True)
class Tls:
    """What a TLS channel trusts and presents (PEM bytes; None: the defaults)."""

    ca: bytes | None = None
    cert: bytes | None = None
    key: bytes | None = None

    @classmethod
    def from_options(cls, tls: bool, ca: str | None = None, cert: str | None = None,
                     key: str | None = None) -> Tls | None:
        """From the command-line options; None for a plain channel. ValueError says why not."""
        if bool(cert) != bool(key):
            raise ValueError("--cert and --key go together (a client certificate and its key)")
        if not (tls or ca or cert):
            return None
        return cls(read_pem("--ca", ca), read_pem("--cert", cert), read_pem("--key", key))

    def credentials(self) -> grpc.ChannelCredentials:
        import grpc

        return grpc.ssl_channel_credentials(root_certificates=self.ca, private_key=self.key,
                                            certificate_chain=self.cert)


def aio_channel(target: str, tls: Tls | None, options: Sequence[tuple[str, object]] = ()) -> grpc.aio.Channel:
    import grpc

    if tls is None:
        return grpc.aio.insecure_channel(target, options=list(options))
    return grpc.aio.secure_channel(target, tls.credentials(), options=list(options))


def channel(target: str, tls: Tls | None, server_name: str = "") -> grpc.Channel:
    """A blocking channel; ``server_name``: the name the server's certificate must carry
    when ``target`` is another (a health check on 127.0.0.1 of a certificate for a host name)."""
    import grpc

    if tls is None:
        return grpc.insecure_channel(target)
    options = [("grpc.ssl_target_name_override", server_name)] if server_name else []
    return grpc.secure_channel(target, tls.credentials(), options=options)


def add_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tls", action="store_true", help="connect over TLS (trusting the system's CAs)")
    parser.add_argument("--ca", metavar="FILE",
                        help="trust this PEM certificate authority (implies --tls; default: the system's CAs)")
    parser.add_argument("--cert", metavar="FILE",
                        help="present this PEM client certificate (mutual TLS; with --key; default: none)")
    parser.add_argument("--key", metavar="FILE", help="the PEM private key of --cert (default: none)")


def from_args(args: argparse.Namespace) -> Tls | None:
    return Tls.from_options(args.tls, args.ca, args.cert, args.key)


def read_pem(option: str, path: str | None) -> bytes | None:
    """The PEM file at ``path`` (None for none); ValueError naming ``option`` if it cannot be
    read or is not PEM (the daemon's own TLS settings are read the same way)."""
    if not path:
        return None
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise ValueError(f"{option}: cannot read {path}: {exc.strerror}") from None
    if b"-----BEGIN " not in data:
        raise ValueError(f"{option}: {path} is not a PEM file (no -----BEGIN line)")
    return data
