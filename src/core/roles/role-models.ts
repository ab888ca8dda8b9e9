import { ArchonError } from '../../shared/errors';
import type { EndpointProbe } from '../../shared/schemas/endpoint';
import type { RunOptions } from '../../shared/schemas/run';
import { settlePrice, type Price } from '../budget/pricing';
import type { ModelClient, ModelMode } from '../model/chat';
import type { DialectName } from '../model/dialects/dialect';
import { CallSlots } from './call-slots';
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
  slots: CallSlots;
}

/** What a role's calls go through: its server, and its own bound (maxConcurrency). */
export interface RoleBinding {
  name: string;
  server: RoleServer;
  slots: CallSlots;
}

export type Connect = (options: RunOptions, signal: AbortSignal) => Promise<{ probe: EndpointProbe; model: ModelClient }>;

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
  static async connect(registry: RoleRegistry, run: OwnServer, how: { connect: Connect; priceOf(url: string, model: string): Price }, signal: AbortSignal): Promise<RoleModels> {
    const servers = new Map<string, RoleServer>();
    for (const name of registry.names()) {
      const wanted = registry.get(name)?.model;
      const key = wanted && serverKey(wanted.url, wanted.name);
      if (!wanted || !key || key === serverKey(run.options.modelUrl, run.options.model) || servers.has(key)) continue;
      servers.set(key, await connectRole(name, wanted, run.options, how, signal));
    }
    return RoleModels.bind(registry, run, servers);
  }

  /** Every role bound to its server: `servers` holds the roles' own, any other role uses the run's. */
  static bind(registry: RoleRegistry, run: OwnServer, servers: ReadonlyMap<string, RoleServer> = new Map()): RoleModels {
    const { options, probe } = run;
    const own: RoleServer = { url: options.modelUrl, model: run.model, probe, mode: modeOf(probe), price: run.price, dialect: null, slots: new CallSlots(options.concurrency ?? probe.parallelSlots) };
    const bindings = new Map<string, RoleBinding>();
    for (const name of registry.names()) {
      const role = registry.get(name);
      const server = role?.model ? servers.get(serverKey(role.model.url, role.model.name)) : undefined;
      bindings.set(name, { name, server: server ?? own, slots: new CallSlots(role?.maxConcurrency ?? null) });
    }
    return new RoleModels(bindings, own);
  }
}

/** The run's own model, already probed and priced. */
export interface OwnServer {
  options: RunOptions;
  probe: EndpointProbe;
  model: ModelClient;
  price: Price;
}

async function connectRole(name: string, wanted: { url: string; name: string }, options: RunOptions, how: { connect: Connect; priceOf(url: string, model: string): Price }, signal: AbortSignal): Promise<RoleServer> {
  let connected: { probe: EndpointProbe; model: ModelClient };
  try {
    connected = await how.connect({ ...options, modelUrl: wanted.url, model: wanted.name }, signal);
  } catch (error) {
    if (!ArchonError.isInstance(error) || signal.aborted) throw error;
    throw new ArchonError(error.code, `The model server of role "${name}" (${wanted.url}): ${error.message} Or change the role's model in the roles file (--roles) or in Settings.`, { cause: error });
  }
  const price = how.priceOf(wanted.url, connected.probe.model);
  settlePrice(price, { model: connected.probe.model, maxCostUsd: options.maxCostUsd });
  return { url: wanted.url, model: connected.model, probe: connected.probe, mode: modeOf(connected.probe), price, dialect: null, slots: new CallSlots(connected.probe.parallelSlots) };
}
