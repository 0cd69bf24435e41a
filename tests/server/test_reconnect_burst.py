"""Every bot of a full arena connecting at once: after a restart of heartsd, or a network
blip between it and the bots' host, they all reconnect in the same second.

gRPC's core keeps calls that arrived but that the server has not yet taken up in a
backlog, and past 1,000 of them (its default ``grpc.server.max_pending_requests``) it
refuses new ones at random, more the fuller it is, all of them past 3,000. grpc.aio takes
calls up one at a time on the event loop, so a burst of 2,000 streams (heartsd's default
``max_bot_streams``) lost about one in twenty: those bots saw "Internal error from Core"
instead of a welcome or a status saying why. The backlog's limits now follow the
daemon's own call budgets (server.server_options), which refuse what is over them with
RESOURCE_EXHAUSTED and a reason.
"""

from __future__ import annotations

import asyncio

import grpc

from heartsbot.proto import bot_pb2

from heartsd.config import Settings
from heartsd.server import server_options

from .harness import run, running_daemon

BURST = 2_000  # Settings().max_bot_streams, the default budget
PLAY = "/hearts.v1.BotService/Play"


def test_the_default_bot_budget_can_connect_all_at_once(tmp_path):
    assert BURST == Settings().max_bot_streams
    tokens = {f"burst{i}": f"token-burst{i}-0123456789" for i in range(BURST)}

    async def scenario() -> tuple[int, list[str]]:
        async with running_daemon(tmp_path, bot_tokens=tokens) as daemon:
            channels = [grpc.aio.insecure_channel(daemon.target) for _ in range(20)]
            try:
                for channel in channels:
                    await channel.channel_ready()

                async def connect(i: int, name: str, token: str) -> str:
                    call = channels[i % len(channels)].stream_stream(
                        PLAY, request_serializer=None, response_deserializer=None)(
                        metadata=(("authorization", f"Bearer {token}"),))
                    try:
                        await call.write(bot_pb2.PlayRequest(hello=bot_pb2.Hello(name=name)).SerializeToString())
                        reply = await call.read()
                        if reply is grpc.aio.EOF:
                            return f"{name}: {await call.code()} {await call.details()}"
                        return "welcome" if bot_pb2.PlayResponse.FromString(reply).HasField("welcome") else "other"
                    except grpc.aio.AioRpcError as exc:
                        return f"{name}: {exc.code()} {exc.details()}"
                    finally:
                        call.cancel()

                outcomes = await asyncio.wait_for(asyncio.gather(
                    *(connect(i, name, token) for i, (name, token) in enumerate(tokens.items()))), 120)
                return outcomes.count("welcome"), [o for o in outcomes if o != "welcome"][:5]
            finally:
                for channel in channels:
                    await channel.close()

    welcomed, refused = run(scenario())
    assert welcomed == BURST, (welcomed, refused)


def test_the_backlog_of_calls_not_yet_taken_up_is_sized_by_the_daemons_budgets():
    settings = Settings()
    options = dict(server_options(settings))
    assert options["grpc.server.max_pending_requests"] >= settings.rpc_limit()
    assert options["grpc.server.max_pending_requests_hard_limit"] > options["grpc.server.max_pending_requests"]
