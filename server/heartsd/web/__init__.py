"""The web front of heartsd: the lobby, the Playboard (a person takes a seat), the live
table and replays, the leaderboard and bot pages, served on the daemon's event loop.

aiohttp serves it (``web.AppRunner`` on the running loop: the daemon keeps its own
loop, signals and shutdown order; one dependency gives HTTP, WebSocket and static
files). What a page shows comes from the same code as the gRPC services
(``heartsd.spectating``, the ladder handlers, a seat's own stream), so hidden
information is enforced in one place.

    heartsd serve --web 127.0.0.1:8080     # then open http://127.0.0.1:8080/

The front itself is ``heartsd.web.app.WebFront``. This package module imports nothing,
so its modules never import round a loop through it.
"""
