// vitest's global setup: starts mocklib serve once; the test files'
// servers open their scopes on it.
import { startServer } from 'mocklib/node';

export default async function setup() {
  const server = await startServer();
  process.env.MOCKLIB_URL = server.url;
  process.env.MOCKLIB_CA_FILE = server.caFile;
  return () => server.close();
}
