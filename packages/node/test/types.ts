// Type-checked, not run (scripts/test-node: tsc --noEmit): the declarations
// describe the MSW-style use the suite makes of the package.
import { bypass, delay, graphql, http, HttpResponse, passthrough } from 'mocklib';
import { setupServer, startServer, type SetupServerApi } from 'mocklib/node';

const server: SetupServerApi = setupServer(
  http.get('https://api.example.com/users/:id', ({ params, cookies, request }) => {
    if (!cookies.session) {
      return new HttpResponse(null, { status: 401 });
    }
    return HttpResponse.json({ id: params.id, agent: request.headers.get('user-agent') });
  }),
  http.post(/\/orders$/, async ({ request }) => {
    await delay(10);
    const real = await fetch(bypass(request));
    return HttpResponse.json(await real.json(), { status: real.status });
  }, { once: true, times: { at_least: 1 } }),
  http.all('/health', HttpResponse.text('ok')),
  graphql.query('GetUser', ({ variables }) => HttpResponse.json({ data: { user: { id: variables.id } } })),
  graphql.link('https://api.example.com/graphql').mutation(/^Add/, () => passthrough()),
  { resource: '/todos', seed: [{ id: 1 }] },
);

async function lifecycle(): Promise<void> {
  await server.listen({ onUnhandledRequest: (request, print) => { if (request.url.includes('x')) print.error(); } });
  server.use(http.get('/flaky', () => HttpResponse.error()));
  const inScope = server.boundary(async (n: number) => n * 2);
  const doubled: number = await inScope(21);
  const journal = await server.requests({ unhandled: true });
  const first: string | null = journal[0]?.handler ?? null;
  const verified = await server.verify();
  if (!verified.ok) throw new Error(verified.report);
  const env: Record<string, string> = server.env;
  const started = await startServer({ args: ['--unhandled', 'bypass'] });
  started.close();
  await server.resetHandlers();
  await server.close();
  void doubled; void first; void env;
}
void lifecycle;
