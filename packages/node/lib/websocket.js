// A WebSocket client (RFC 6455) for the callback channel: text frames of
// JSON, both ways, on one connection to `mocklib serve`. Node 20 has no
// global WebSocket (22 has one), and the channel needs little of the
// protocol: no extensions, no binary messages, no subprotocols; so the
// package has no dependency (the Python package speaks it with its standard
// library too).
import { createHash, randomBytes, randomFillSync } from 'node:crypto';
import { EventEmitter } from 'node:events';
import http from 'node:http';

const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';
const TEXT = 0x1;
const CLOSE = 0x8;
const PING = 0x9;
const PONG = 0xa;

/**
 * Opens a WebSocket to `url` (`ws://host:port/path`), with `headers` on the
 * upgrade. Resolves to a `Channel` once the server has accepted it; rejects
 * with the server's answer (status and body) when it refuses.
 */
export function connect(url, headers = {}) {
  const target = new URL(url);
  const key = randomBytes(16).toString('base64');
  return new Promise((resolve, reject) => {
    const request = http.request({
      host: target.hostname.replace(/^\[(.*)\]$/, '$1'),
      port: target.port || 80,
      path: `${target.pathname}${target.search}`,
      // Straight to the server: never through mocklib's own interception
      // (`agent: false` would make one of the global agent's class).
      agent: new http.Agent(),
      headers: {
        ...headers,
        connection: 'Upgrade',
        upgrade: 'websocket',
        'sec-websocket-key': key,
        'sec-websocket-version': '13',
      },
    });
    request.on('error', reject);
    request.on('response', (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk) => { body += chunk; });
      response.on('end', () => reject(new Error(`the callback channel ${url} was refused: ${response.statusCode} ${body.trim()}`)));
    });
    request.on('upgrade', (response, socket, head) => {
      const expected = createHash('sha1').update(key + GUID).digest('base64');
      if (response.headers['sec-websocket-accept'] !== expected) {
        socket.destroy();
        reject(new Error(`the callback channel ${url} answered the upgrade with a wrong Sec-WebSocket-Accept`));
        return;
      }
      resolve(new Channel(socket, head));
    });
    request.end();
  });
}

/**
 * An open WebSocket: `send(text)`, `close()`; emits `message` (text) and
 * `close` (code) once.
 */
export class Channel extends EventEmitter {
  constructor(socket, head) {
    super();
    this.socket = socket;
    this.buffer = head && head.length ? Buffer.from(head) : Buffer.alloc(0);
    this.fragments = [];
    this.closed = false;
    socket.setNoDelay(true);
    socket.on('data', (chunk) => {
      this.buffer = this.buffer.length ? Buffer.concat([this.buffer, chunk]) : chunk;
      this.read();
    });
    socket.on('close', () => this.ended(1006));
    socket.on('error', () => this.ended(1006));
    if (this.buffer.length) {
      queueMicrotask(() => this.read());
    }
  }

  /** Lets the process exit while the channel is open. */
  unref() {
    this.socket.unref();
    return this;
  }

  ref() {
    this.socket.ref();
    return this;
  }

  send(text) {
    if (!this.closed) {
      this.socket.write(frame(TEXT, Buffer.from(text, 'utf8')));
    }
  }

  close(code = 1000) {
    if (this.closed) {
      return;
    }
    const payload = Buffer.alloc(2);
    payload.writeUInt16BE(code);
    this.socket.end(frame(CLOSE, payload));
    this.ended(code);
  }

  ended(code) {
    if (!this.closed) {
      this.closed = true;
      this.socket.destroy();
      this.emit('close', code);
    }
  }

  // Takes every whole frame off the buffer.
  read() {
    for (;;) {
      const buffer = this.buffer;
      if (buffer.length < 2) {
        return;
      }
      const fin = (buffer[0] & 0x80) !== 0;
      const opcode = buffer[0] & 0x0f;
      const masked = (buffer[1] & 0x80) !== 0;
      let length = buffer[1] & 0x7f;
      let offset = 2;
      if (length === 126) {
        if (buffer.length < 4) return;
        length = buffer.readUInt16BE(2);
        offset = 4;
      } else if (length === 127) {
        if (buffer.length < 10) return;
        length = Number(buffer.readBigUInt64BE(2));
        offset = 10;
      }
      const maskOffset = offset;
      if (masked) offset += 4;
      if (buffer.length < offset + length) {
        return;
      }
      let payload = buffer.subarray(offset, offset + length);
      if (masked) {
        payload = Buffer.from(payload);
        for (let i = 0; i < payload.length; i++) payload[i] ^= buffer[maskOffset + (i & 3)];
      }
      this.buffer = buffer.subarray(offset + length);
      this.frame(fin, opcode, payload);
      if (this.closed) {
        return;
      }
    }
  }

  frame(fin, opcode, payload) {
    if (opcode === PING) {
      this.socket.write(frame(PONG, payload));
    } else if (opcode === CLOSE) {
      const code = payload.length >= 2 ? payload.readUInt16BE(0) : 1005;
      if (!this.closed) {
        this.socket.end(frame(CLOSE, payload.subarray(0, 2)));
      }
      this.ended(code);
    } else if (opcode === TEXT || opcode === 0x0) {
      // A message may come in fragments: a first frame, then continuations.
      this.fragments.push(payload);
      if (fin) {
        const text = Buffer.concat(this.fragments).toString('utf8');
        this.fragments = [];
        this.emit('message', text);
      }
    }
    // Binary frames and pongs: the channel has none to read.
  }
}

// A client frame: always masked (RFC 6455 5.3).
function frame(opcode, payload) {
  const length = payload.length;
  const extra = length < 126 ? 0 : length < 65536 ? 2 : 8;
  const out = Buffer.allocUnsafe(2 + extra + 4 + length);
  out[0] = 0x80 | opcode;
  if (extra === 0) {
    out[1] = 0x80 | length;
  } else if (extra === 2) {
    out[1] = 0x80 | 126;
    out.writeUInt16BE(length, 2);
  } else {
    out[1] = 0x80 | 127;
    out.writeBigUInt64BE(BigInt(length), 2);
  }
  const maskAt = 2 + extra;
  randomFillSync(out, maskAt, 4);
  for (let i = 0; i < length; i++) {
    out[maskAt + 4 + i] = payload[i] ^ out[maskAt + (i & 3)];
  }
  return out;
}
