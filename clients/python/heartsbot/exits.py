"""The exit codes of every Hearts Arena command-line client, in one place.

``heartsbot play|stdio|local|leaderboard|matches``, the Node bot (``clients/node/bot.js``
keeps the same numbers) and ``heartsd admin|tournament`` exit with these, so a script or
a supervisor that runs any of them reads one table (README, "Command-line convention").
A refused token is 3 in every client; a server never reached is 4.

>>> EXIT_REFUSED, EXIT_UNREACHABLE, EXIT_INTERRUPTED, EXIT_CLOSED_PIPE
(3, 4, 130, 141)
>>> print(TABLE.splitlines()[0])
exit codes (the same in heartsbot, the Node bot, the stdio bridge and heartsd admin):
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

EXIT_OK = 0
EXIT_FAILED = 1  # the bot's own code failed (heartsbot local), or the stdio bot exited or never answered
EXIT_USAGE = 2
EXIT_REFUSED = 3
EXIT_UNREACHABLE = 4
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports a program Ctrl-C stopped
EXIT_CLOSED_PIPE = 141  # 128 + SIGPIPE, as a shell reports `cat` or `grep` stopped by `| head`

TABLE = f"""exit codes (the same in heartsbot, the Node bot, the stdio bridge and heartsd admin):
  {EXIT_OK:<4} done: --matches played, or stopped with Ctrl-C after finishing the running matches
       (at once when none was running)
  {EXIT_FAILED:<4} the bot failed: its strategy raised, answered illegally or ran out of time (local),
       or the bot program exited or never answered the handshake (stdio)
  {EXIT_USAGE:<4} usage: a bad or missing option (--strategy, --token, --name), an unknown strategy,
       file or ruleset, a bot program that cannot be started
  {EXIT_REFUSED:<4} refused by the server: an unknown token, a name that is not the token's, a bad
       hello, or a request it turned down (its status and reason on stderr)
  {EXIT_UNREACHABLE:<4} the server could not be reached (never connected after 5 attempts; a connection
       that once worked is retried until Ctrl-C)
  {EXIT_INTERRUPTED:<4} interrupted: a second Ctrl-C left at once, abandoning running matches (or
       Ctrl-C while the client was still starting, before it could drain)
  {EXIT_CLOSED_PIPE:<4} the output's reader went away (e.g. piped into head): ended quietly
       (heartsbot and heartsd; 128 + SIGPIPE)"""


def quiet_on_closed_stdout(main: Callable[[], int]) -> int:
    """``main()``'s exit code, or :data:`EXIT_CLOSED_PIPE` without a word when stdout's
    reader has gone (``heartsd ladder leaderboard | head -1``).

    Python ignores SIGPIPE, so a write to a closed pipe raises BrokenPipeError wherever
    it happens, and the final flush at exit would raise it once more ("Exception ignored
    ... BrokenPipeError"). So the output is flushed here, and on the error stdout is
    pointed at the null device before the interpreter's own flush (the idiom of Python's
    signal docs, "Note on SIGPIPE"). Each command-line entry point (heartsbot's,
    heartsd's) calls this once, around everything it runs."""
    try:
        code = main()
        sys.stdout.flush()
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return EXIT_CLOSED_PIPE
    return code
