import { ArchonError } from '../../shared/errors';
import type { EndpointProbe } from '../../shared/schemas/endpoint';
import type { RunOptions } from '../../shared/schemas/run';
import { settlePrice, type Price } from '../budget/pricing';
import type { ModelClient, ModelMode } from '../model/chat';
import type { ConnectSession } from '../model/connect';
import type { ServerRequest } from '../model/server-request';
import type { DialectName } from '../model/dialects/dialect-names';
import { Slots } from '../run/slots';
import type { RoleRegistry } from './role-registry';

/** The steps at once against a server that reports no parallel slots. */
export const DEFAULT_SERVER_CONCURRENCY = 4;

/** One model on one server, probed once per run, shared by every role that names it. */
export interface RoleServer {
  url: string;
  model: ModelClient;
  probe: EndpointProbe;
  mode: ModelMode;
  price: Price;
  /** The tool-call dialect its model writes, once seen (the run's own server keeps it on the run's context). */
  dialect: DialectName | null;
  /** The server's parallel slots bound the calls sent to it at once. */
  slots: Slots;
}

/** What a role's calls go through: its server, and its own bound (maxConcurrency). */
export interface RoleBinding {
  name: string;
  server: RoleServer;
  slots: Slots;
}

/** `requests`: what the probe sent (none when an earlier run's probe stood). */
export type Connect = (options: RunOptions, signal: AbortSignal, session?: ConnectSession) => Promise<{ probe: EndpointProbe; model: ModelClient; requests?: readonly ServerRequest[] }>;

export function modeOf(probe: EndpointProbe): ModelMode {
  return probe.toolCalling ? 'native' : 'text';
}

function serverKey(url: string, model: string): string {
  return `${url}\n${model}`;
}

/** Every role's model and bounds for one run. */
export class RoleModels {
  private constructor(
    private readonly bindings: ReadonlyMap<string, RoleBinding>,
    readonly own: RoleServer,
    /** What probing the roles' own servers sent, for the run's record. */
    readonly probeRequests: readonly ServerRequest[] = [],
  ) {}

  binding(name: string): RoleBinding {
    const binding = this.bindings.get(name);
    if (!binding) throw new ArchonError('CONFIG_INVALID', `The role "${name}" is not in this run's registry. Give it in the roles file (--roles) or in Settings, or plan without it.`);
    return binding;
  }

  /** The distinct servers the run talks to, its own first. */
  servers(): RoleServer[] {
    return [...new Set([this.own, ...[...this.bindings.values()].map((binding) => binding.server)])];
  }

  /** How many steps run at once: the operator's number, else every server's slots added up. */
  fanOut(concurrency: number | null | undefined): number {
    return concurrency ?? this.servers().reduce((sum, server) => sum + (server.probe.parallelSlots ?? DEFAULT_SERVER_CONCURRENCY), 0);
  }

  /**
   * Probes each role's server once per distinct server and model (the run's own is already probed).
   * An unreachable one names the role and its URL; a cost cap needs every role's model priced.
   */
  static async connect(registry: RoleRegistry, run: OwnServer, how: RoleConnect, signal: AbortSignal): Promise<RoleModels> {
    const servers = new Map<string, RoleServer>();
    const requests: ServerRequest[] = [];
    for (const name of registry.names()) {
      const wanted = registry.get(name)?.model;
      const key = wanted && serverKey(wanted.url, wanted.name);
      if (!wanted || !key || key === serverKey(run.options.modelUrl, run.options.model) || servers.has(key)) continue;
      const connected = await connectRole(name, wanted, run.options, how, signal);
      servers.set(key, connected.server);
      requests.push(...connected.requests);
    }
    return RoleModels.bind(registry, run, servers, requests);
  }

  /** Every role bound to its server: `servers` holds the roles' own, any other role uses the run's. */
  static bind(registry: RoleRegistry, run: OwnServer, servers: ReadonlyMap<string, RoleServer> = new Map(), probeRequests: readonly ServerRequest[] = []): RoleModels {
    const { options, probe } = run;
    const own: RoleServer = { url: options.modelUrl, model: run.model, probe, mode: modeOf(probe), price: run.price, dialect: null, slots: new Slots(options.concurrency ?? probe.parallelSlots) };
    const bindings = new Map<string, RoleBinding>();
    for (const name of registry.names()) {
      const role = registry.get(name);
      const server = role?.model ? servers.get(serverKey(role.model.url, role.model.name)) : undefined;
      bindings.set(name, { name, server: server ?? own, slots: new Slots(role?.maxConcurrency ?? null) });
    }
    return new RoleModels(bindings, own, probeRequests);
  }
}

/** The run's own model, already probed and priced. */
export interface OwnServer {
  options: RunOptions;
  probe: EndpointProbe;
  model: ModelClient;
  price: Price;
}

/** How role servers are reached: the run's connector and the session it probes with, and each model's price. */
export interface RoleConnect {
  connect: Connect;
  session?: ConnectSession;
  priceOf(url: string, model: string): Price;
}

async function connectRole(name: string, wanted: { url: string; name: string }, options: RunOptions, how: RoleConnect, signal: AbortSignal): Promise<{ server: RoleServer; requests: readonly ServerRequest[] }> {
  let connected: Awaited<ReturnType<Connect>>;
  try {
    connected = await how.connect({ ...options, modelUrl: wanted.url, model: wanted.name }, signal, how.session);
  } catch (error) {
    if (!ArchonError.isInstance(error) || signal.aborted) throw error;
    throw new ArchonError(error.code, `The model server of role "${name}" (${wanted.url}): ${error.message} Or change the role's model in the roles file (--roles) or in Settings.`, { cause: error });
  }
  const price = how.priceOf(wanted.url, connected.probe.model);
  settlePrice(price, { model: connected.probe.model, maxCostUsd: options.maxCostUsd });
  const server = { url: wanted.url, model: connected.model, probe: connected.probe, mode: modeOf(connected.probe), price, dialect: null, slots: new Slots(connected.probe.parallelSlots) };
  return { server, requests: connected.requests ?? [] };
}
