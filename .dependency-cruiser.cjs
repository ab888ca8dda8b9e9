/**
 * The layers, enforced (npm test fails on a violation):
 *   shared   imports nothing of ours (and no Node built-ins: it runs in the renderer too)
 *   core     imports shared only, never electron
 *   executor imports shared only, never electron
 *   main     wires core into Electron; never the renderer, preload, hosts or the auditor (it starts
 *            the auditor's process by path)
 *   preload, renderer  import shared only
 *   hosts    compose core (and the auditor) for the CLI and the headless host; never electron
 *   auditor  imports shared only; nothing but the hosts may import it, so the runtime has no path
 *            to the audit log or its key
 *   engine   (the built-in engine's process) imports shared only; it alone imports node-llama-cpp, and
 *            nothing imports it: hosts start it by path
 *   core     has no import circle, not even through type-only imports; only core/model talks to model
 *            servers and only core/tools to tool processes
 *   core's capabilities (memory, validation, sub-agents, recovery, conflicts) plug into the run kernel
 *            through its hooks: each imports only the kernel and shared, never the engine (core/agent)
 *            nor another capability; nothing but the composition imports a capability
 */
const layer = (name, allowed) => ({
  name: `${name}-imports-only-${allowed.join('-') || 'itself'}`,
  severity: 'error',
  from: { path: `^src/${name}/` },
  to: { path: '^src/', pathNot: [`^src/${name}/`, ...allowed.map((other) => `^src/${other}/`)] },
});

/** Folders that are capabilities: each exports one Capability, listed in src/core/capabilities.ts. */
const CAPABILITIES = ['memory', 'validation', 'subagents', 'recovery', 'conflicts', 'outcome'];
/** The run kernel and the services it is made of: what a capability may import. */
const KERNEL = ['run', 'model', 'tools', 'store', 'events', 'approval', 'budget', 'stop', 'roles', 'secrets', 'process', 'bus', 'planner', 'contract', 'provenance'];
/** The modules a run's code reaches a capability through (memory/ also holds the long-term memory service the store uses). */
const CAPABILITY_MODULES = ['^src/core/(validation|subagents|recovery|conflicts|outcome)/', '^src/core/memory/run-memory\\.ts$'];

module.exports = {
  forbidden: [
    layer('shared', []),
    layer('core', ['shared']),
    layer('executor', ['shared']),
    layer('main', ['shared', 'core']),
    layer('auditor', ['shared']),
    layer('engine', ['shared']),
    layer('preload', ['shared']),
    layer('renderer', ['shared']),
    layer('hosts', ['shared', 'core', 'auditor']),
    {
      name: 'electron-only-in-main-and-preload',
      severity: 'error',
      from: { path: '^src/', pathNot: ['^src/main/', '^src/preload/'] },
      to: { path: '^electron$|node_modules/electron/' },
    },
    {
      name: 'shared-and-renderer-use-no-node-builtins',
      severity: 'error',
      from: { path: '^src/(shared|renderer)/' },
      to: { dependencyTypes: ['core'] },
    },
    {
      name: 'llama-cpp-only-in-the-engine',
      comment: 'node-llama-cpp runs models inside the built-in engine\'s own process; everything else reaches it over HTTP, through the model gateway.',
      severity: 'error',
      from: { pathNot: '^src/engine/' },
      to: { path: 'node_modules/node-llama-cpp/|^node-llama-cpp$' },
    },
    {
      name: 'engine-only-by-path',
      comment: 'Hosts start the engine as a process (out/node/engine.js); no module imports it.',
      severity: 'error',
      from: { pathNot: '^src/engine/' },
      to: { path: '^src/engine/' },
    },
    {
      name: 'model-servers-only-through-the-model-gateway',
      comment: 'Only src/core/model talks to model servers; every other module calls a model through the run kernel (run/model-gate.ts).',
      severity: 'error',
      from: { pathNot: '^src/core/model/' },
      to: { path: ['node_modules/openai/', '^src/core/model/model-client\\.ts$'] },
    },
    {
      name: 'tool-processes-only-through-the-tool-gateway',
      comment: 'Only src/core/tools starts and calls tool processes; runs reach them through the tool gateway (ToolHost), undo through its file restorer.',
      severity: 'error',
      from: { pathNot: '^src/core/tools/' },
      to: { path: '^src/core/tools/tool-worker-pool\\.ts$' },
    },
    {
      name: 'capabilities-import-only-the-kernel',
      comment: 'A capability plugs into the run kernel through its hooks: it imports its own folder, the kernel and shared, never the engine nor another capability.',
      severity: 'error',
      from: { path: `^src/core/(${CAPABILITIES.join('|')})/` },
      to: { path: '^src/core/', pathNot: ['^src/core/$1/', `^src/core/(${KERNEL.join('|')})/`, '^src/core/(log|runtime)\\.ts$'] },
    },
    {
      name: 'capabilities-only-through-the-composition',
      comment: 'The engine and the kernel call capabilities through the run hooks; only src/core/capabilities.ts lists them.',
      severity: 'error',
      from: { path: '^src/core/', pathNot: [`^src/core/(${CAPABILITIES.join('|')})/`, '^src/core/capabilities\\.ts$'] },
      to: { path: CAPABILITY_MODULES },
    },
    {
      name: 'no-circular-in-core',
      comment: 'The runtime has no circle at all, type-only imports included: each module can be read after the ones it imports.',
      severity: 'error',
      from: { path: '^src/core/' },
      to: { circular: true },
    },
    {
      name: 'no-circular',
      comment: 'Elsewhere type-only cycles (a renderer slice typing the store it belongs to) are erased at build and allowed.',
      severity: 'error',
      from: { pathNot: '^src/core/' },
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'] },
  },
};
