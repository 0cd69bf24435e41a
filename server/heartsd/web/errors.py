"""HTTP statuses for the refusals the web front passes on: the domain's (ArenaError
kinds) and the gRPC handlers' (status codes). app.py maps every error through these.

A refusal's JSON body is ``{"error": text}``, with ``"code"`` where the refusal is one of a
fixed set (SeatError.code, ArenaError.code, the codes here): pages say a code in their
language (i18n.js ``refusal_<code>``) and show the English text for any other."""

from __future__ import annotations

import grpc

HTTP_OF_GRPC = {
    grpc.StatusCode.INVALID_ARGUMENT: 400, grpc.StatusCode.OUT_OF_RANGE: 400, grpc.StatusCode.NOT_FOUND: 404,
    grpc.StatusCode.FAILED_PRECONDITION: 409, grpc.StatusCode.RESOURCE_EXHAUSTED: 429,
    grpc.StatusCode.UNAVAILABLE: 503, grpc.StatusCode.PERMISSION_DENIED: 403, grpc.StatusCode.UNAUTHENTICATED: 401,
}
HTTP_OF_ARENA = {"invalid": 400, "out_of_range": 400, "precondition": 409, "not_found": 404, "unavailable": 503,
                 "exhausted": 429, "unauthenticated": 401, "denied": 403}
# What a page is told of a stored record or event window that does not parse: the log names the row.
DAMAGED = "this match's stored record is damaged or was edited; the server's operator is told (its log names it)"
DAMAGED_CODE = "damaged"
INTERNAL = "internal error"  # a defect: the log has its traceback
INTERNAL_CODE = "internal"
