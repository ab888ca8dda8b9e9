import { z } from 'zod';
import { ArchonError } from '../../shared/errors';
import { parseJsonOrUndefined } from '../../shared/json';
import { sleep } from '../../shared/abort';
import { readSecretFile } from '../secrets/secret-file';

/** Where a Restate cluster answers: its ingress (invocations) and its admin API (deployments, cancellation). */
export interface RestateAddress {
  ingress: string;
  admin: string;
}

const MIN_SECRET_CHARS = 32;

/** Where the app's Settings name the secret file, for what its errors say. */
export const SETTINGS_SECRET_FIELD = 'Cluster secret file in Settings → Engine';

/** The secret the desk signs each call with and every worker checks: read from a file outside the workspace, named by `flag` (or a field of Settings). */
export function clusterSecret(file: string, workspace: string, flag = '--cluster-secret-file'): string {
  const secret = readSecretFile(file, workspace, { name: 'cluster secret', noun: 'secret', flag, example: 'cluster-secret' });
  if (secret.length < MIN_SECRET_CHARS) throw new ArchonError('CONFIG_INVALID', `The cluster secret in ${file} is ${secret.length} characters long; it needs at least ${MIN_SECRET_CHARS}. Make one with: openssl rand -hex 32 > ${file}`);
  return secret;
}

/** How long an unreachable cluster is waited for (a server restarting) before a call gives up. */
export const CLUSTER_WAIT_MS = 60_000;
const RETRY_MS = 250;
const CHECK_TIMEOUT_MS = 5000;
/** A request that waited this long before it broke reached a live server. */
const ALIVE_MS = 10_000;
/** What a server says while it starts or restarts. */
const RESTARTING: ReadonlySet<number> = new Set([502, 503, 504]);

const unreachable = (url: string, cause: unknown) =>
  new ArchonError('CLUSTER_UNREACHABLE', `No Restate server answers at ${url}. Start one (npx restate-server), or pass the address of yours with --restate-ingress and --restate-admin.`, { cause });

/** A fetch that got no answer (refused, reset, a restart under way, a long wait cut by the client), as opposed to an answer. */
function isTransient(error: unknown): boolean {
  return error instanceof TypeError && error.message === 'fetch failed';
}

/** Codes of a connection that was never made: however long that took, no server was there. */
const NOT_CONNECTED: ReadonlySet<string> = new Set(['ECONNREFUSED', 'UND_ERR_CONNECT_TIMEOUT', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

function neverConnected(failure: unknown): boolean {
  const code = ((failure as { cause?: { code?: unknown } } | null)?.cause as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && NOT_CONNECTED.has(code);
}

/** What a refusal says: the message of Restate's JSON error, else the start of the body. */
function refusalOf(body: string): string {
  const parsed = z.object({ message: z.string() }).safeParse(parseJsonOrUndefined(body));
  return (parsed.success ? parsed.data.message : body).slice(0, 500);
}

const idempotent = (key: string | null): Record<string, string> => (key === null ? {} : { 'idempotency-key': key });

const SentSchema = z.object({ invocationId: z.string().min(1) });
const DeploymentSchema = z.object({ id: z.string().min(1) });

/** A run id as a literal of the admin API's SQL: checked to be a UUID before it is written into a query. */
export function sqlRunId(runId: string): string {
  const checked = z.uuid().safeParse(runId);
  if (!checked.success) throw new ArchonError('CONFIG_INVALID', `"${runId}" is not a run id: give the whole id, as archon cluster-runs lists it.`);
  return `'${checked.data}'`;
}

/** The Restate cluster as Archon uses it: deployments registered, invocations sent, awaited, killed. */
export class RestateCluster {
  /** `deadlineMs`: the longest any one request may take, answer or not (null: a server restarting is waited for). */
  constructor(
    readonly address: RestateAddress,
    private readonly deadlineMs: number | null = null,
  ) {}

  /**
   * Asked once, before a run: the server answers on both addresses and a worker has registered
   * `service`; otherwise what to start, or to pass, is said.
   */
  async check(service: string, signal: AbortSignal): Promise<void> {
    const ask = (url: string) =>
      fetch(url, { signal: AbortSignal.any([signal, AbortSignal.timeout(CHECK_TIMEOUT_MS)]) }).catch((error: unknown) => {
        signal.throwIfAborted();
        throw unreachable(url, error);
      });
    for (const url of [`${this.address.admin}/health`, `${this.address.ingress}/restate/health`]) {
      const answer = await ask(url);
      if (!answer.ok) throw unreachable(url, new Error(`it answered ${answer.status}`));
    }
    const services = await ask(`${this.address.admin}/services/${service}`);
    if (!services.ok) throw new ArchonError('CLUSTER_UNREACHABLE', `No Archon worker has registered with the Restate server at ${this.address.admin}. Start one there (archon worker, see docs/scale-out.md), then run again.`);
  }

  /** Registers an endpoint (HTTP/1.1, request-response: any replica behind its address may serve any attempt); registering it again is fine. */
  async register(uri: string, signal: AbortSignal): Promise<string> {
    return (await this.json(`${this.address.admin}/deployments`, { method: 'POST', body: JSON.stringify({ uri, use_http_11: true }) }, DeploymentSchema, signal)).id;
  }

  /**
   * Sends one invocation of `target` (`Object/key/handler`) under idempotency `key`: the same key
   * gives the same invocation (Restate keeps its result), so a call sent twice runs once. A
   * workflow's run takes no key (its workflow key is one already). Returns its id.
   */
  async send(target: string, input: unknown, key: string | null, signal: AbortSignal): Promise<string> {
    return (await this.json(`${this.address.ingress}/${target}/send`, { method: 'POST', body: JSON.stringify(input), headers: idempotent(key) }, SentSchema, signal)).invocationId;
  }

  /** One invocation of `target` under idempotency `key` (or none), waited for: its output, as `schema` reads it. */
  async call<T>(target: string, input: unknown, key: string | null, schema: z.ZodType<T>, signal: AbortSignal): Promise<T> {
    return this.json(`${this.address.ingress}/${target}`, { method: 'POST', body: JSON.stringify(input), headers: idempotent(key) }, schema, signal);
  }

  /** The invocation's output, waited for across a restart of the server (bounded by CLUSTER_WAIT_MS of silence) until `signal` ends the wait. */
  async output<T>(invocationId: string, schema: z.ZodType<T>, signal: AbortSignal): Promise<T> {
    return this.json(`${this.address.ingress}/restate/invocation/${invocationId}/attach`, { method: 'GET' }, schema, signal);
  }

  /** Ends an invocation at once, whatever it is doing: its worker's attempt is closed, which aborts the tool it runs. */
  async kill(invocationId: string, signal: AbortSignal): Promise<void> {
    const url = `${this.address.admin}/invocations/${invocationId}/kill`;
    await this.withinDeadline(url, signal, (bounded) => this.attempt(url, { method: 'PATCH' }, bounded));
  }

  /** Rows of the server's own tables (its SQL introspection), each read by `row`. */
  async query<T>(sql: string, row: z.ZodType<T>, signal: AbortSignal): Promise<T[]> {
    return (await this.json(`${this.address.admin}/query`, { method: 'POST', body: JSON.stringify({ query: sql }) }, z.object({ rows: z.array(row) }), signal)).rows;
  }

  private json<T>(url: string, init: RequestInit, schema: z.ZodType<T>, signal: AbortSignal): Promise<T> {
    return this.withinDeadline(url, signal, async (bounded) => {
      const answer = schema.safeParse(await (await this.attempt(url, init, bounded)).json());
      if (!answer.success) throw new ArchonError('CLUSTER_REFUSED', `The Restate server at ${new URL(url).origin} answered ${new URL(url).pathname} with what Archon cannot read: ${answer.error.issues[0]?.message ?? 'invalid'}. Check that the address is a Restate server's.`);
      return answer.data;
    });
  }

  /** A request and the reading of its answer, within the deadline when there is one: a server that has not answered whole by then is said to be unreachable. */
  private async withinDeadline<T>(url: string, signal: AbortSignal, task: (signal: AbortSignal) => Promise<T>): Promise<T> {
    if (this.deadlineMs === null) return task(signal);
    const deadline = AbortSignal.timeout(this.deadlineMs);
    try {
      return await task(AbortSignal.any([signal, deadline]));
    } catch (error) {
      if (deadline.aborted && !signal.aborted) throw unreachable(url, error);
      throw error;
    }
  }

  /**
   * One request, repeated while the server does not answer, for at most CLUSTER_WAIT_MS of silence
   * (a request that waited long on a connection before it broke shows the server was there: the count
   * starts again); an error the server answers with is said as it is.
   */
  private async attempt(url: string, init: RequestInit, signal: AbortSignal): Promise<Response> {
    let giveUpAt: number | null = null;
    for (;;) {
      const sent = Date.now();
      const answer = await fetch(url, { ...init, headers: { 'content-type': 'application/json', accept: 'application/json', ...init.headers }, signal }).catch((error: unknown) => {
        signal.throwIfAborted();
        if (!isTransient(error)) throw unreachable(url, error);
        return error;
      });
      if (answer instanceof Response && answer.ok) return answer;
      if (answer instanceof Response && !RESTARTING.has(answer.status)) {
        throw new ArchonError('CLUSTER_REFUSED', `The Restate server at ${new URL(url).origin} refused ${init.method} ${new URL(url).pathname} (${answer.status}): ${refusalOf(await answer.text())}`, { details: { status: answer.status } });
      }
      if (answer instanceof Response) await answer.body?.cancel();
      if (Date.now() - sent > ALIVE_MS && !neverConnected(answer)) giveUpAt = null;
      giveUpAt ??= Date.now() + CLUSTER_WAIT_MS;
      if (Date.now() >= giveUpAt) throw unreachable(url, answer);
      await sleep(RETRY_MS, signal);
    }
  }
}
