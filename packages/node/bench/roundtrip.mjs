// The round trip of one request through a resolver, with Node's fetch:
// mocklib (a JavaScript resolver answered over the callback channel, and a
// constant Response the server answers alone) against MSW's in-process
// interception. `node bench/roundtrip.mjs mocklib|msw` prints one JSON line
// per variant: p50 and p90 of sequential requests (ms), and requests per
// second with 8 callers at once.
const SEQUENTIAL = Number(process.env.BENCH_SEQUENTIAL || 400);
const WARMUP = 50;
const CONCURRENT_SECONDS = Number(process.env.BENCH_SECONDS || 3);
const CALLERS = 8;

async function measure(name, url) {
  const call = async () => {
    const response = await fetch(url);
    if (response.status !== 200) throw new Error(`${name}: ${response.status} ${await response.text()}`);
    await response.arrayBuffer();
  };
  for (let i = 0; i < WARMUP; i++) await call();
  const times = [];
  for (let i = 0; i < SEQUENTIAL; i++) {
    const started = process.hrtime.bigint();
    await call();
    times.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  times.sort((a, b) => a - b);
  const deadline = Date.now() + CONCURRENT_SECONDS * 1000;
  let done = 0;
  const started = process.hrtime.bigint();
  await Promise.all(Array.from({ length: CALLERS }, async () => {
    while (Date.now() < deadline) {
      await call();
      done++;
    }
  }));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const result = {
    variant: name,
    p50_ms: Number(times[Math.floor(times.length / 2)].toFixed(3)),
    p90_ms: Number(times[Math.floor(times.length * 0.9)].toFixed(3)),
    per_second_8_callers: Math.round(done / seconds),
  };
  console.log(JSON.stringify(result));
  return result;
}

const which = process.argv[2] || 'mocklib';
if (which === 'mocklib') {
  const { http, HttpResponse } = await import('mocklib');
  const { setupServer } = await import('mocklib/node');
  const server = setupServer(
    http.get('https://api.example.com/users/:id', ({ params }) => HttpResponse.json({ id: params.id, name: 'Kate' })),
    http.get('https://api.example.com/static/:id', HttpResponse.json({ id: 1, name: 'Kate' })),
    http.get('http://api.example.com/users/:id', ({ params }) => HttpResponse.json({ id: params.id, name: 'Kate' })),
  );
  await server.listen();
  await measure('mocklib: JavaScript resolver (callback channel), HTTPS', 'https://api.example.com/users/1');
  await measure('mocklib: constant Response (static entry), HTTPS', 'https://api.example.com/static/1');
  await measure('mocklib: JavaScript resolver, plain HTTP', 'http://api.example.com/users/1');
  await server.close();
} else if (which === 'msw') {
  const { http, HttpResponse } = await import('msw');
  const { setupServer } = await import('msw/node');
  const server = setupServer(
    http.get('https://api.example.com/users/:id', ({ params }) => HttpResponse.json({ id: params.id, name: 'Kate' })),
  );
  server.listen();
  await measure('msw: resolver in process', 'https://api.example.com/users/1');
  server.close();
} else {
  throw new Error(`usage: node bench/roundtrip.mjs mocklib|msw, not ${which}`);
}
