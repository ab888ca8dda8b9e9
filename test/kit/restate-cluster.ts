import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { builtFile, PROJECT_ROOT } from '../support/built';

/** The Restate server the project depends on: its platform binary, started directly (the npm wrapper would leave it behind a kill -9). */
const SERVER_BIN = join(PROJECT_ROOT, 'node_modules', '@restatedev', `restate-server-${process.platform}-${process.arch}`, 'bin', 'restate-server');

/** `count` distinct loopback ports free now (held together while they are picked). */
export async function freePorts(count: number): Promise<number[]> {
  const servers = Array.from({ length: count }, () => createNetServer());
  await Promise.all(servers.map((server) => new Promise<void>((done) => server.listen(0, '127.0.0.1', done))));
  const ports = servers.map((server) => (server.address() as { port: number }).port);
  await Promise.all(servers.map((server) => new Promise<void>((done) => server.close(() => done()))));
  return ports;
}

async function stop(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise<void>((done) => child.once('exit', () => done()));
  child.kill(signal);
  await gone;
}

/** Polls `ready` until it holds (errors count as not yet), for at most `seconds`. */
export async function until(ready: () => boolean | Promise<boolean>, what: string, seconds = 60): Promise<void> {
  for (let attempt = 0; attempt < seconds * 10; attempt++) {
    if (await Promise.resolve().then(ready).catch(() => false)) return;
    await new Promise((done) => setTimeout(done, 100));
  }
  throw new Error(`timed out after ${seconds} s waiting until ${what}`);
}

export interface RestateServer {
  ingress: string;
  admin: string;
  /** kill -9, then the same server on the same ports and data: deployments and invocations survive. */
  restart(): Promise<void>;
  /** Killed, and its folder (about 150 MB) removed. */
  close(): Promise<void>;
}

/** A real Restate server on free loopback ports, in a folder of its own; `settings` as RESTATE_… environment variables. */
export async function startRestateServer(settings: Record<string, string> = {}): Promise<RestateServer> {
  const baseDir = mkdtempSync(join(tmpdir(), 'archon-restate-'));
  const [ingressPort, adminPort, nodePort] = (await freePorts(3)) as [number, number, number];
  const env = {
    ...process.env,
    RESTATE_INGRESS__BIND_ADDRESS: `127.0.0.1:${ingressPort}`,
    RESTATE_ADMIN__BIND_ADDRESS: `127.0.0.1:${adminPort}`,
    RESTATE_BIND_ADDRESS: `127.0.0.1:${nodePort}`,
    RESTATE_ADVERTISED_ADDRESS: `http://127.0.0.1:${nodePort}`,
    ...settings,
  };
  const admin = `http://127.0.0.1:${adminPort}`;
  const ingress = `http://127.0.0.1:${ingressPort}`;
  let child: ChildProcess | null = null;
  const start = async () => {
    child = spawn(SERVER_BIN, ['--base-dir', baseDir, '--node-name', 'n1', '--listen-mode', 'tcp'], { env, stdio: 'ignore' });
    await until(async () => (await fetch(`${admin}/health`)).ok && (await fetch(`${ingress}/restate/health`)).ok, 'the Restate server answers', 30);
  };
  await start();
  return {
    ingress,
    admin,
    restart: async () => {
      if (child) await stop(child, 'SIGKILL');
      await start();
    },
    close: async () => {
      if (child) await stop(child, 'SIGKILL');
      rmSync(baseDir, { recursive: true, force: true });
    },
  };
}

export interface ArchonWorker {
  id: string;
  url: string;
  child: ChildProcess;
  close(): Promise<void>;
}

/** A cluster secret in a file of its own folder (outside any workspace), mode 600. */
export function clusterSecretFile(): { file: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'archon-secret-'));
  const file = join(dir, 'cluster-secret');
  writeFileSync(file, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600 });
  return { file, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** `archon worker` on its own data dir, serving `workspace`, registered at `advertise` (a balancer) or its own address. */
export async function startWorker(cluster: Pick<RestateServer, 'ingress' | 'admin'>, options: { id: string; workspace: string; dataDir: string; secretFile: string; port?: number; advertise?: string }): Promise<ArchonWorker> {
  const args = ['worker', '--id', options.id, '--port', String(options.port ?? 0), '--workspace', options.workspace, '--data-dir', options.dataDir, '--restate-ingress', cluster.ingress, '--restate-admin', cluster.admin, '--cluster-secret-file', options.secretFile];
  const child = spawn(process.execPath, [builtFile('node/cli.js'), ...args, ...(options.advertise ? ['--advertise', options.advertise] : [])], { stdio: ['ignore', 'pipe', 'pipe'] });
  let errors = '';
  child.stderr?.on('data', (chunk: Buffer) => (errors += chunk.toString('utf8')));
  const line = await new Promise<string>((done, fail) => {
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).once('line', done);
    child.once('exit', (code) => fail(new Error(`archon worker exited with ${code} before serving: ${errors}`)));
  });
  const url = /^Archon worker \S+ serving on (http:\/\/\S+)$/.exec(line)?.[1];
  if (!url) throw new Error(`archon worker said: ${line}`);
  return { id: options.id, url, child, close: () => stop(child, 'SIGKILL') };
}

export interface Balancer {
  url: string;
  close(): Promise<void>;
}

/**
 * A round-robin HTTP/1.1 balancer on a loopback port, as an operator's load balancer in front of
 * workers: each request goes to the next of `ports()` that accepts it. A backend that dies mid-answer
 * breaks the answer, and Restate tries that attempt again, through the balancer, on another.
 */
export async function startBalancer(port: number, ports: () => readonly number[]): Promise<Balancer> {
  let next = 0;
  const forward = (incoming: IncomingMessage, outgoing: ServerResponse, body: Buffer, tries: number) => {
    const targets = ports();
    const upstream = request({ host: '127.0.0.1', port: targets[next++ % targets.length], method: incoming.method, path: incoming.url, headers: incoming.headers, agent: false }, (answer) => {
      outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(outgoing);
      answer.on('close', () => {
        if (!answer.complete) outgoing.destroy();
      });
    });
    // Restate ending an attempt (a killed invocation) closes the worker's side too, as a load balancer does.
    outgoing.on('close', () => {
      if (!outgoing.writableFinished) upstream.destroy();
    });
    upstream.on('error', () => {
      if (tries > 1 && !outgoing.headersSent) forward(incoming, outgoing, body, tries - 1);
      else outgoing.destroy();
    });
    upstream.end(body);
  };
  const server = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => forward(incoming, outgoing, Buffer.concat(chunks), Math.max(ports().length, 1) * 2));
  });
  await new Promise<void>((done) => server.listen(port, '127.0.0.1', done));
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((done) => server.close(() => done()));
    },
  };
}
