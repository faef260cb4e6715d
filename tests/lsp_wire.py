"""A raw JSON-RPC client for the language server over stdio, with deadlines: a message that
never comes fails the test instead of hanging it."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from typing import Callable, List, Optional

SERVER = [sys.executable, "-m", "codemod", "lsp"]


class Wire:
    def __init__(self, cwd: Optional[str] = None, stderr=subprocess.DEVNULL) -> None:
        self.process = subprocess.Popen(SERVER, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr,
                                        cwd=cwd)
        self._buffer = b""
        self.received: List[dict] = []  # every message, in order
        self._next_id = 100

    def send(self, **fields) -> None:
        body = json.dumps({"jsonrpc": "2.0", **fields}).encode()
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()

    def request(self, method: str, params=None, msg_id=None):
        if msg_id is None:
            self._next_id += 1
            msg_id = self._next_id
        self.send(id=msg_id, method=method, **({} if params is None else {"params": params}))
        return msg_id

    def notify(self, method: str, params=None) -> None:
        self.send(method=method, **({} if params is None else {"params": params}))

    def _read_one(self, deadline: float) -> Optional[dict]:
        fd = self.process.stdout.fileno()
        while True:
            head, sep, rest = self._buffer.partition(b"\r\n\r\n")
            if sep:
                length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                              if line.lower().startswith(b"content-length"))
                if len(rest) >= length:
                    self._buffer = rest[length:]
                    message = json.loads(rest[:length])
                    self.received.append(message)
                    return message
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                return None
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return None
            self._buffer += chunk

    def wait_for(self, match: Callable[[dict], bool], timeout: float, what: str = "") -> dict:
        """The first message (already received or to come) that ``match``es; fails at the deadline."""
        for message in self.received:
            if match(message):
                return message
        deadline = time.monotonic() + timeout
        while True:
            message = self._read_one(deadline)
            if message is None:
                raise AssertionError(f"no {what or 'matching message'} within {timeout} s; got "
                                     f"{[m.get('method') or m.get('id') for m in self.received]}")
            if match(message):
                return message

    def answer(self, msg_id, timeout: float = 30) -> dict:
        return self.wait_for(lambda m: m.get("id") == msg_id and "method" not in m, timeout, f"answer to {msg_id!r}")

    def initialize(self, root_uri: Optional[str] = None, options=None, capabilities=None) -> dict:
        msg_id = self.request("initialize", {"capabilities": capabilities or {}, "rootUri": root_uri,
                                             "initializationOptions": options or {}})
        answer = self.answer(msg_id)
        self.notify("initialized", {})
        return answer

    def open(self, uri: str, text: str, version: int = 1) -> None:
        self.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python",
                                                              "version": version, "text": text}})

    def diagnostics(self, uri: str, version: int, timeout: float = 60) -> list:
        return self.wait_for(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                             and m["params"]["uri"] == uri and m["params"].get("version") == version,
                             timeout, f"diagnostics of {uri} v{version}")["params"]["diagnostics"]

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            try:
                stream.close()
            except OSError:
                pass
