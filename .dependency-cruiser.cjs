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
 */
const layer = (name, allowed) => ({
  name: `${name}-imports-only-${allowed.join('-') || 'itself'}`,
  severity: 'error',
  from: { path: `^src/${name}/` },
  to: { path: '^src/', pathNot: [`^src/${name}/`, ...allowed.map((other) => `^src/${other}/`)] },
});

module.exports = {
  forbidden: [
    layer('shared', []),
    layer('core', ['shared']),
    layer('executor', ['shared']),
    layer('main', ['shared', 'core']),
    layer('auditor', ['shared']),
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
      name: 'no-circular',
      comment: 'Type-only cycles (a slice typing the store it belongs to) are erased at build and allowed.',
      severity: 'error',
      from: {},
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
