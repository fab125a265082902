"""A small Debug Adapter Protocol client for the debugger tests.

It talks to debugpy's adapter over its socket (what `quiver debug --listen`
opens), as VS Code does: `Content-Length` framed JSON messages, requests
answered by responses with the same `request_seq`, events at any time. Every
wait is bounded (a hang fails the test after the timeout, never blocks it).
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import socket
import subprocess
import sys
import threading
import time

TIMEOUT = float(
    os.environ.get("QUIVER_DAP_TIMEOUT", "90")
)  # seconds for any one wait (a slow CI machine; never a speed check)


class DapError(AssertionError):
    pass


class Dap:
    def __init__(self, host: str, port: int, timeout: float = TIMEOUT) -> None:
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.sock = socket.create_connection((host, port), timeout=5)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        self.sock.settimeout(None)
        self.seq = 0
        self.messages: queue.Queue = queue.Queue()
        self.events: list[dict] = []  # every event seen, in order
        self.responses: dict[int, dict] = {}
        self.pending: list[dict] = []  # events not yet consumed by wait_event
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        buf = b""
        try:
            while True:
                while b"\r\n\r\n" not in buf:
                    chunk = self.sock.recv(65536)
                    if not chunk:
                        self.messages.put(None)
                        return
                    buf += chunk
                head, _, buf = buf.partition(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value.strip())
                while len(buf) < length:
                    chunk = self.sock.recv(65536)
                    if not chunk:
                        self.messages.put(None)
                        return
                    buf += chunk
                body, buf = buf[:length], buf[length:]
                self.messages.put(json.loads(body.decode("utf-8")))
        except OSError:
            self.messages.put(None)

    def send(self, command: str, arguments: dict | None = None) -> int:
        self.seq += 1
        msg = {"seq": self.seq, "type": "request", "command": command, "arguments": arguments or {}}
        data = json.dumps(msg).encode("utf-8")
        self.sock.sendall(b"Content-Length: %d\r\n\r\n" % len(data) + data)
        return self.seq

    def _pump(self, deadline: float) -> bool:
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        try:
            msg = self.messages.get(timeout=left)
        except queue.Empty:
            return False
        if msg is None:
            raise DapError("the debug adapter closed the connection")
        if msg.get("type") == "response":
            self.responses[msg["request_seq"]] = msg
        elif msg.get("type") == "event":
            self.events.append(msg)
            self.pending.append(msg)
        return True

    def response(self, seq: int, timeout: float = TIMEOUT) -> dict:
        deadline = time.monotonic() + timeout
        while seq not in self.responses:
            if not self._pump(deadline):
                raise DapError(f"no response to request {seq} in {timeout} s")
        msg = self.responses.pop(seq)
        if not msg.get("success"):
            raise DapError(f"{msg.get('command')} failed: {msg.get('message')} {msg.get('body')}")
        return msg.get("body") or {}

    def request(self, command: str, arguments: dict | None = None, timeout: float = TIMEOUT) -> dict:
        return self.response(self.send(command, arguments), timeout)

    def event(self, name: str, timeout: float = TIMEOUT) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            for i, ev in enumerate(self.pending):
                if ev.get("event") == name:
                    del self.pending[i]
                    return ev.get("body") or {}
            if not self._pump(deadline):
                seen = [e.get("event") for e in self.events]
                raise DapError(f"no {name!r} event in {timeout} s (seen: {seen})")

    # -- the usual steps

    def start(
        self,
        breakpoints: dict[str, list[int | dict]],
        exception_filters: tuple[str, ...] = ("uncaught",),
        attach: dict | None = None,
    ) -> int:
        """initialize, attach, the breakpoints (a line, or a DAP SourceBreakpoint
        such as ``{"line": 9, "condition": "i == 3"}``), configurationDone; the
        attach's seq."""
        self.request(
            "initialize",
            {
                "clientID": "quiver-tests",
                "adapterID": "debugpy",
                "pathFormat": "path",
                "linesStartAt1": True,
                "columnsStartAt1": True,
                "supportsVariableType": True,
            },
        )
        attach_seq = self.send("attach", {"justMyCode": True, **(attach or {})})
        self.event("initialized")
        for path, lines in breakpoints.items():
            body = self.request(
                "setBreakpoints",
                {"source": {"path": path}, "breakpoints": [n if isinstance(n, dict) else {"line": n} for n in lines]},
            )
            assert all(b.get("verified") for b in body["breakpoints"]), body
        self.request("setExceptionBreakpoints", {"filters": list(exception_filters)})
        self.request("configurationDone")
        return attach_seq

    def stopped(self, timeout: float = TIMEOUT) -> dict:
        return self.event("stopped", timeout)

    def top(self, thread_id: int) -> dict:
        frames = self.request("stackTrace", {"threadId": thread_id})["stackFrames"]
        return frames[0]

    def frames(self, thread_id: int) -> list[dict]:
        return self.request("stackTrace", {"threadId": thread_id})["stackFrames"]

    def locals(self, frame_id: int) -> dict[str, dict]:
        scopes = self.request("scopes", {"frameId": frame_id})["scopes"]
        ref = scopes[0]["variablesReference"]
        return {v["name"]: v for v in self.request("variables", {"variablesReference": ref})["variables"]}

    def children(self, ref: int) -> dict[str, dict]:
        return {v["name"]: v for v in self.request("variables", {"variablesReference": ref})["variables"]}

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()


def start_quiver_debug(args: list[str], cwd: str, timeout: float = TIMEOUT, command: list[str] | None = None):
    """`quiver debug ARGS --listen 127.0.0.1:0 --wait-for-client` in a child
    process (`command`: how quiver is started, `python -m quiver.cli` unless
    told); (the process, the port its debugger listens on, stderr lines read)."""
    cmd = [*(command or [sys.executable, "-m", "quiver.cli"]), "debug", *args]
    proc = subprocess.Popen(
        cmd, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    lines: list[str] = []
    found: list[int] = []
    ready = threading.Event()

    def pump_err() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append(line)
            if "debugger listening on " in line and not found:
                found.append(int(line.rsplit(":", 1)[1]))
                ready.set()
        ready.set()

    out: list[str] = []

    def pump_out() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            out.append(line)

    threading.Thread(target=pump_err, daemon=True).start()
    threading.Thread(target=pump_out, daemon=True).start()
    proc.out_lines = out  # type: ignore[attr-defined]  (the program's stdout, read as it comes)
    if not ready.wait(timeout) or not found:
        proc.kill()
        raise DapError(f"quiver debug did not start listening: {''.join(lines)}")
    return proc, found[0], lines
