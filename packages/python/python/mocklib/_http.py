"""A small HTTP/1.1 client for the admin API: kept-alive connections to
loopback, requests pipelined when several go at once.

Written here rather than using ``http.client``: a test makes a few admin
requests (add handlers, verify, end its scope and open the next), and
``http.client`` spends about 0.3 ms of Python on each, where reading the
answer by hand takes about 0.13 ms (measured in docs/BENCHMARKS.md,
"Python: the pytest plugin"). The admin API answers with
``content-length`` bodies; chunked ones are read too."""

from __future__ import annotations

import socket
from typing import Iterable, Optional


class ConnectionLost(ConnectionError):
    """The server closed a kept-alive connection before it answered."""


class Connection:
    """One kept-alive connection to ``host:port``."""

    def __init__(self, netloc: str, timeout: float = 60.0):
        host, _, port = netloc.rpartition(":")
        self._netloc = netloc
        self._address = (host.strip("[]"), int(port))
        self._timeout = timeout
        self._sock: Optional[socket.socket] = None
        self._file = None

    def _open(self) -> None:
        sock = socket.create_connection(self._address, timeout=self._timeout)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._sock = sock
        self._file = sock.makefile("rb")

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
        if self._sock is not None:
            self._sock.close()
        self._sock = self._file = None

    @property
    def is_open(self) -> bool:
        return self._sock is not None

    def exchange(self, requests: Iterable[tuple[str, str, dict, Optional[bytes]]]) -> list[tuple[int, bytes]]:
        """Sends ``requests`` (method, path, headers, body) in one write and
        reads their answers in order: one round trip for them all. Raises
        ``ConnectionLost`` when the connection was closed under them."""
        if self._sock is None:
            self._open()
        wire = bytearray()
        count = 0
        for method, path, headers, body in requests:
            lines = [f"{method} {path} HTTP/1.1", f"host: {self._netloc}", f"content-length: {len(body or b'')}"]
            lines += [f"{name}: {value}" for name, value in headers.items()]
            wire += ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
            if body:
                wire += body
            count += 1
        try:
            self._sock.sendall(wire)
            answers = []
            for _ in range(count):
                status, data, close = self._read_answer()
                answers.append((status, data))
                if close:
                    self.close()
                    if len(answers) < count:
                        raise ConnectionLost("the server closed the connection after an answer")
                    break
            return answers
        except (OSError, ValueError) as error:
            self.close()
            raise ConnectionLost(str(error)) from error

    def _read_answer(self) -> tuple[int, bytes, bool]:
        status_line = self._file.readline(65537)
        if not status_line:
            raise ConnectionLost("the server closed the connection")
        parts = status_line.split(None, 2)
        if len(parts) < 2 or not parts[0].startswith(b"HTTP/"):
            raise ValueError(f"not an HTTP answer: {status_line[:80]!r}")
        status = int(parts[1])
        length = None
        chunked = False
        close = parts[0] == b"HTTP/1.0"
        while True:
            line = self._file.readline(65537)
            if line in (b"\r\n", b"\n"):
                break
            if not line:
                raise ConnectionLost("the server closed the connection in an answer's head")
            name, _, value = line.partition(b":")
            name = name.strip().lower()
            if name == b"content-length":
                length = int(value.strip())
            elif name == b"transfer-encoding":
                chunked = b"chunked" in value.lower()
            elif name == b"connection":
                close = b"close" in value.lower()
        if chunked:
            data = self._read_chunked()
        elif length is not None:
            data = self._read_exactly(length)
        elif status in (204, 304) or 100 <= status < 200:
            data = b""
        else:
            # No length: the body runs to the connection's end.
            data = self._file.read()
            close = True
        return status, data, close

    def _read_exactly(self, count: int) -> bytes:
        data = self._file.read(count)
        if len(data) != count:
            raise ConnectionLost("the server closed the connection in an answer's body")
        return data

    def _read_chunked(self) -> bytes:
        data = bytearray()
        while True:
            size_line = self._file.readline(65537)
            if not size_line:
                raise ConnectionLost("the server closed the connection in a chunked body")
            size = int(size_line.split(b";", 1)[0].strip(), 16)
            if size == 0:
                # Trailers, up to the blank line.
                while self._file.readline(65537) not in (b"\r\n", b"\n", b""):
                    pass
                return bytes(data)
            data += self._read_exactly(size)
            self._read_exactly(2)
