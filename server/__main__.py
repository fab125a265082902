"""`python -m quiver.server [--stdio]` and the `quiver-lsp` script.

Fast start: importing pygls, lsprotocol and the checker takes most of half a
second, longer than an editor should wait for the `initialize` reply. So this
module (standard library only) starts that import on a thread, the checker
first, reads the first message itself and, when it is `initialize`, answers it
from server/capabilities.py, the same table the pygls side uses, as soon as
the checker (whose token legend the reply names) is loaded. When the import
is done, the bytes read so far are handed to pygls as if unread: pygls handles
`initialize` again (to set itself up) and its duplicate reply is suppressed.
Anything unexpected in the first message just skips the fast path.
QUIVER_LSP_FAST_START=0 turns it off.

Standard output carries the protocol and nothing else: `sys.stdout` is pointed
at stderr before anything else runs, so a stray print cannot corrupt the stream.
"""

from __future__ import annotations

import json
import os
import sys
import threading

USAGE = """usage: quiver-lsp [--stdio] [--version]

The Quiver language server. It speaks the Language Server Protocol over
standard input and output (--stdio, the default and only transport).
Set QUIVER_LSP_LOG=INFO (or DEBUG) for a log on standard error.
"""


class _Replay:
    """A binary reader that returns `prefix` before reading on from `stream`."""

    def __init__(self, prefix: bytes, stream) -> None:
        self._prefix = prefix
        self._stream = stream

    def readline(self, size: int = -1) -> bytes:
        if self._prefix:
            i = self._prefix.find(b"\n")
            if i >= 0:
                line, self._prefix = self._prefix[: i + 1], self._prefix[i + 1 :]
                return line
            line, self._prefix = self._prefix, b""
            return line + self._stream.readline()
        return self._stream.readline()

    def read(self, n: int = -1) -> bytes:
        if self._prefix:
            if n < 0:
                data, self._prefix = self._prefix, b""
                return data + self._stream.read()
            data, self._prefix = self._prefix[:n], self._prefix[n:]
            if len(data) < n:
                data += self._stream.read(n - len(data))
            return data
        return self._stream.read(n)


def _read_message(stream) -> tuple[bytes, dict | None]:
    """One framed message: (the raw bytes read, the parsed JSON or None)."""
    raw = b""
    length = None
    while True:
        line = stream.readline()
        raw += line
        if not line:
            return raw, None
        if line in (b"\r\n", b"\n"):
            break
        name, _, value = line.decode("ascii", "replace").partition(":")
        if name.strip().lower() == "content-length":
            try:
                length = int(value.strip())
            except ValueError:
                return raw, None
    if length is None or length < 0 or length > 64 * 1024 * 1024:
        return raw, None
    body = stream.read(length)
    raw += body
    try:
        message = json.loads(body)
    except ValueError:
        return raw, None
    return raw, message if isinstance(message, dict) else None


def _write_message(stream, message: dict) -> None:
    body = json.dumps(message, separators=(",", ":")).encode("utf-8")
    stream.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    stream.flush()


def main(argv: list[str] | None = None) -> int:
    from quiver import untrusted_folder_off_path

    untrusted_folder_off_path()  # before pygls, lark or the checker is imported
    args = sys.argv[1:] if argv is None else argv
    for a in args:
        if a in ("-h", "--help"):
            sys.stderr.write(USAGE)
            return 0
        if a == "--version":
            from . import __version__

            sys.stderr.write(f"quiver-lsp {__version__}\n")
            return 0
        if a != "--stdio":
            sys.stderr.write(f"quiver-lsp: unknown argument {a!r}\n{USAGE}")
            return 2

    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # the protocol owns the real stdout

    failed: list[BaseException] = []

    def load() -> None:
        try:
            # The checker first: the fast reply below needs its token legend
            # (capabilities.py), and waits for this import rather than
            # competing with it.
            import quiver.checker.ide  # noqa: F401

            from . import server  # noqa: F401  (pygls, lsprotocol)
        except BaseException as exc:  # reported below, on the main thread
            failed.append(exc)

    loader = threading.Thread(target=load, name="quiver-import", daemon=True)
    loader.start()

    prefix = b""
    answered = None
    if os.environ.get("QUIVER_LSP_FAST_START", "1") != "0":
        prefix, message = _read_message(stdin)
        if (
            message is not None
            and message.get("method") == "initialize"
            and "id" in message
            and isinstance(message.get("params"), dict)
            and isinstance(message["params"].get("capabilities"), dict)
        ):
            from .capabilities import initialize_result

            reply = {"jsonrpc": "2.0", "id": message["id"], "result": initialize_result(message["params"])}
            _write_message(stdout, reply)
            answered = message["id"]

    loader.join()
    if failed:
        raise failed[0]
    from .server import create_server, serve

    return serve(create_server(), _Replay(prefix, stdin), stdout, answered)


if __name__ == "__main__":
    sys.exit(main())
