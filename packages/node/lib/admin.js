// The admin API of `mocklib serve` (its README's "The admin API"): JSON over
// plain HTTP, on kept-alive connections of an agent of its own, so these
// requests never go through the interception the package installs.
import http from 'node:http';

const agent = new http.Agent({ keepAlive: true });

/** The admin API refused a request: `status` and `body` say why. */
export class MocklibError extends Error {
  constructor(what, status, body) {
    super(`mocklib: ${what}: ${status} ${reason(body)}`);
    this.name = 'MocklibError';
    this.status = status;
    this.body = body;
  }
}

// The admin API's refusal: the `error` of its JSON (`400`), or its text.
function reason(body) {
  try {
    const parsed = JSON.parse(body);
    if (parsed && typeof parsed.error === 'string') {
      return parsed.error;
    }
  } catch {
    // Text.
  }
  return String(body).trim();
}

/**
 * `method url` with `body` (JSON, or text with `contentType`); resolves to
 * `{ status, text }`.
 */
export function request(method, url, { body, contentType, token } = {}) {
  const target = new URL(url);
  const headers = {};
  let payload;
  if (body !== undefined) {
    payload = typeof body === 'string' ? body : JSON.stringify(body);
    headers['content-type'] = contentType || 'application/json';
    headers['content-length'] = Buffer.byteLength(payload);
  }
  if (token) {
    headers.authorization = `Bearer ${token}`;
  }
  return new Promise((resolve, reject) => {
    const sent = http.request({
      agent,
      host: target.hostname,
      port: target.port,
      path: `${target.pathname}${target.search}`,
      method,
      headers,
    });
    sent.on('error', reject);
    sent.on('response', (response) => {
      const chunks = [];
      response.on('data', (chunk) => chunks.push(chunk));
      response.on('error', reject);
      response.on('end', () => resolve({ status: response.statusCode, text: Buffer.concat(chunks).toString('utf8') }));
    });
    sent.end(payload);
  });
}

/** As `request`, reading the answer as JSON; rejects unless its status is in `ok`. */
export async function json(what, method, url, options = {}, ok = [200, 201, 204]) {
  const answer = await request(method, url, options);
  if (!ok.includes(answer.status)) {
    throw new MocklibError(what, answer.status, answer.text);
  }
  return answer.text ? JSON.parse(answer.text) : null;
}
