"""A WebSocket client (RFC 6455) on the standard library, for the callback
channel: plain ``ws://`` to ``mocklib serve`` on loopback, text frames.

The subset the channel needs: the client handshake, masked text frames out,
text frames in (fragmented ones reassembled), ping answered with pong, and
the closing handshake. ``send_text`` may be called from several threads.

Written here rather than taken from the ``websockets`` package: the wheel
then depends on nothing (its install needs no index, and cannot clash with
the version of ``websockets`` a suite pins for its own code), and the
channel needs only this subset, on loopback.
"""

from __future__ import annotations

import base64
import hashlib
import os
import socket
import struct
import threading
from urllib.parse import urlsplit

_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

_CONTINUATION, _TEXT, _BINARY, _CLOSE, _PING, _PONG = 0x0, 0x1, 0x2, 0x8, 0x9, 0xA


class HandshakeError(Exception):
    """The server did not upgrade the connection; ``status`` and ``body``
    say what it answered instead (``409``: another client holds the scope's
    channel)."""

    def __init__(self, status: int, body: str):
        super().__init__(f"the callback channel was refused: {status} {body.strip()}")
        self.status = status
        self.body = body


class WebSocket:
    """One client connection. ``recv_text`` returns ``None`` once the
    connection is closed (by either side)."""

    def __init__(self, url: str, headers: dict[str, str] | None = None, timeout: float = 10.0):
        parts = urlsplit(url)
        if parts.scheme != "ws":
            raise ValueError(f"only ws:// URLs are supported (the channel is on loopback): {url}")
        host, port = parts.hostname or "127.0.0.1", parts.port or 80
        path = parts.path or "/"
        if parts.query:
            path += "?" + parts.query
        self._sock = socket.create_connection((host, port), timeout=timeout)
        self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        key = base64.b64encode(os.urandom(16))
        lines = [
            f"GET {path} HTTP/1.1",
            f"Host: {host}:{port}",
            "Upgrade: websocket",
            "Connection: Upgrade",
            f"Sec-WebSocket-Key: {key.decode()}",
            "Sec-WebSocket-Version: 13",
        ]
        lines += [f"{name}: {value}" for name, value in (headers or {}).items()]
        self._sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        self._buffer = b""
        head = self._read_head()
        status_line, *header_lines = head.decode("latin-1").split("\r\n")
        status = int(status_line.split(" ", 2)[1])
        answered = {}
        for line in header_lines:
            name, _, value = line.partition(":")
            answered[name.strip().lower()] = value.strip()
        if status != 101:
            length = int(answered.get("content-length", "0") or 0)
            body = self._read_exactly(length) if length else b""
            self._sock.close()
            raise HandshakeError(status, body.decode("utf-8", "replace"))
        expected = base64.b64encode(hashlib.sha1(key + _GUID).digest()).decode()
        if answered.get("sec-websocket-accept") != expected:
            self._sock.close()
            raise HandshakeError(status, "the server's Sec-WebSocket-Accept does not match the key")
        self._sock.settimeout(None)
        self._send_lock = threading.Lock()
        self._closed = False

    # Reading.

    def _fill(self) -> bool:
        chunk = self._sock.recv(65536)
        if not chunk:
            return False
        self._buffer += chunk
        return True

    def _read_head(self) -> bytes:
        while b"\r\n\r\n" not in self._buffer:
            if not self._fill():
                raise HandshakeError(0, "the connection closed during the handshake")
        head, _, self._buffer = self._buffer.partition(b"\r\n\r\n")
        return head

    def _read_exactly(self, count: int) -> bytes:
        while len(self._buffer) < count:
            if not self._fill():
                raise ConnectionError("the connection closed in the middle of a frame")
        data, self._buffer = self._buffer[:count], self._buffer[count:]
        return data

    def _read_frame(self) -> tuple[bool, int, bytes]:
        first, second = self._read_exactly(2)
        fin, opcode = bool(first & 0x80), first & 0x0F
        masked, length = bool(second & 0x80), second & 0x7F
        if length == 126:
            (length,) = struct.unpack("!H", self._read_exactly(2))
        elif length == 127:
            (length,) = struct.unpack("!Q", self._read_exactly(8))
        mask = self._read_exactly(4) if masked else None
        payload = self._read_exactly(length)
        if mask:
            payload = _apply_mask(payload, mask)
        return fin, opcode, payload

    def recv_text(self) -> str | None:
        """The next text (or binary, decoded) message; ``None`` once closed."""
        message: list[bytes] = []
        try:
            while True:
                fin, opcode, payload = self._read_frame()
                if opcode == _PING:
                    self._send_frame(_PONG, payload)
                elif opcode == _PONG:
                    pass
                elif opcode == _CLOSE:
                    if not self._closed:
                        self._send_frame(_CLOSE, payload[:2])
                    self._closed = True
                    self._sock.close()
                    return None
                else:
                    message.append(payload)
                    if fin:
                        return b"".join(message).decode("utf-8", "replace")
        except (OSError, ConnectionError, ValueError):
            self._closed = True
            return None

    # Writing.

    def _send_frame(self, opcode: int, payload: bytes) -> None:
        head = bytearray([0x80 | opcode])
        length = len(payload)
        if length < 126:
            head.append(0x80 | length)
        elif length < 1 << 16:
            head.append(0x80 | 126)
            head += struct.pack("!H", length)
        else:
            head.append(0x80 | 127)
            head += struct.pack("!Q", length)
        mask = os.urandom(4)
        head += mask
        with self._send_lock:
            self._sock.sendall(bytes(head) + _apply_mask(payload, mask))

    def send_text(self, text: str) -> None:
        self._send_frame(_TEXT, text.encode("utf-8"))

    def close(self) -> None:
        """Starts the closing handshake (code 1000); the reader then sees the
        server's close and returns ``None``."""
        if self._closed:
            return
        self._closed = True
        try:
            self._send_frame(_CLOSE, struct.pack("!H", 1000))
            self._sock.shutdown(socket.SHUT_WR)
        except OSError:
            self._sock.close()


def _apply_mask(payload: bytes, mask: bytes) -> bytes:
    # XOR as one big integer: far faster in CPython than byte by byte.
    if not payload:
        return payload
    length = len(payload)
    repeated = (mask * (length // 4 + 1))[:length]
    return (int.from_bytes(payload, "big") ^ int.from_bytes(repeated, "big")).to_bytes(length, "big")
