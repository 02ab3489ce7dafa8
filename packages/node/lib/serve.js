// The `mocklib serve` this process speaks to: one started from the platform
// package's binary the first time a server listens (and ended with this
// process: its standard input closes), or one started elsewhere, named by
// `MOCKLIB_URL`.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';

const require = createRequire(import.meta.url);

// The platform packages (optionalDependencies of `mocklib`), by Node's
// `process.platform` and `process.arch`: npm installs the one whose `os` and
// `cpu` match. The Linux binary is linked statically (musl): one package for
// glibc and musl distributions.
const PLATFORMS = {
  'linux-x64': '@mocklib/linux-x64',
};

/**
 * The `mocklib` command: `$MOCKLIB_BIN`, else the platform package's, else
 * the first on `PATH`.
 */
export function findBinary() {
  if (process.env.MOCKLIB_BIN) {
    return process.env.MOCKLIB_BIN;
  }
  const platform = `${process.platform}-${process.arch}`;
  const pkg = PLATFORMS[platform];
  if (pkg) {
    try {
      return require.resolve(`${pkg}/bin/mocklib`);
    } catch {
      // Not installed (--no-optional, or another platform's lock file): try PATH.
    }
  }
  const name = process.platform === 'win32' ? 'mocklib.exe' : 'mocklib';
  for (const folder of (process.env.PATH || '').split(path.delimiter)) {
    const candidate = path.join(folder || '.', name);
    try {
      if (statSync(candidate).isFile()) {
        return candidate;
      }
    } catch {
      // Not there.
    }
  }
  throw new Error(
    `mocklib: no mocklib command for ${platform}: ${pkg ? `the optional dependency ${pkg} is not installed (npm install without --omit=optional)` : 'no prebuilt binary is published for it'}; `
      + 'set MOCKLIB_BIN to one (cargo install mocklib-cli), or MOCKLIB_URL to a running mocklib serve',
  );
}

/**
 * Starts `mocklib serve ARGS...` and resolves once it listens, to
 * `{ url, env, caFile, close() }`. It ends when `close()` is called or this
 * process exits.
 */
export async function startServer({ args = [], binary = findBinary(), token } = {}) {
  const dir = mkdtempSync(path.join(tmpdir(), 'mocklib-node-'));
  const caFile = path.join(dir, 'ca.pem');
  const command = ['serve', '--until-stdin-closes', '--ca-out', caFile, ...args];
  if (token) {
    command.push('--admin-token', token);
  }
  const child = spawn(binary, command, { stdio: ['pipe', 'pipe', 'inherit'] });
  const env = {};
  const lines = createInterface({ input: child.stdout });
  const listening = new Promise((resolve, reject) => {
    child.once('error', (error) => reject(new Error(`mocklib: cannot start ${binary}: ${error.message}`)));
    child.once('exit', (code, signal) => reject(new Error(`mocklib: ${binary} serve exited (${signal || code}) before it listened`)));
    lines.on('line', (line) => {
      if (line === '') {
        resolve();
        return;
      }
      const at = line.indexOf('=');
      if (at > 0) {
        env[line.slice(0, at)] = line.slice(at + 1);
      }
    });
  });
  await listening;
  // Nothing more is read; keep the pipe drained, and let this process exit
  // while the server runs: its standard input closes then, and it ends.
  lines.removeAllListeners('line');
  child.stdout.resume();
  child.unref();
  child.stdin.unref?.();
  child.stdout.unref?.();
  child.stdin.on('error', () => {});
  return {
    url: env.MOCKLIB_URL,
    env,
    caFile,
    token,
    close() {
      child.stdin.end();
      child.kill('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

let shared = null;

/**
 * The server of this process: `MOCKLIB_URL`'s, or one started on first use
 * and shared by every `setupServer` of the process.
 */
export function sharedServer() {
  if (!shared) {
    const url = process.env.MOCKLIB_URL;
    shared = url
      ? Promise.resolve({
        url: url.replace(/\/+$/, ''),
        env: {},
        caFile: process.env.MOCKLIB_CA_FILE,
        token: process.env.MOCKLIB_ADMIN_TOKEN,
        close() {},
      })
      : startServer({ token: process.env.MOCKLIB_ADMIN_TOKEN });
    shared.catch(() => { shared = null; });
  }
  return shared;
}

/** The certificates to trust inside a scope's tunnels: mocklib's CA. */
export function caOf(server, scopeEnv) {
  const file = server.caFile || scopeEnv.NODE_EXTRA_CA_CERTS;
  return file ? readFileSync(file, 'utf8') : undefined;
}
