"""A hung endpoint: a TCP server on 127.0.0.1 that accepts every connection and never sends a byte.

What a client meets when the service behind a port has stopped answering (an embedding API
whose model is stuck, a PostgreSQL that is frozen): the connection is made, the request
goes out, no answer comes. The server counts the connections, so a test can wait for the
client to have reached it, and holds them open until it is closed.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from types import TracebackType


class SilentServer:
    def __init__(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self._lock = threading.Lock()
        self._held: list[socket.socket] = []
        self._arrived = threading.Condition(self._lock)
        self._thread = threading.Thread(target=self._accept, name="silent-server", daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def connections(self) -> int:
        """How many connections were accepted so far."""
        with self._lock:
            return len(self._held)

    def wait_for_connections(self, count: int = 1, timeout: float = 60.0) -> bool:
        """Whether `count` connections have arrived within `timeout` seconds."""
        deadline = time.monotonic() + timeout
        with self._arrived:
            while len(self._held) < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._arrived.wait(left)
            return True

    def _accept(self) -> None:
        while True:
            try:
                connection, _address = self._listener.accept()
            except OSError:  # closed
                return
            with self._arrived:
                self._held.append(connection)
                self._arrived.notify_all()

    def __enter__(self) -> SilentServer:
        self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        # shutdown wakes the accept() of the server's thread (close alone does not, on Linux).
        with contextlib.suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)
        self._listener.close()
        self._thread.join(timeout=10)
        with self._lock:
            for connection in self._held:
                connection.close()
