/**
 * Errors are written once, in the command line's terms ("pass --model-url"); the app shows them in its
 * own terms (Settings, the Resume button). This is the one place that decides the app's wording.
 */
const IN_APP: readonly [RegExp, string][] = [
  [/pass --model-url with its address/g, 'set its address in Settings (Model server URL)'],
  [/Pass --api-key or set OPENAI_API_KEY\./g, 'Enter the API key in Settings.'],
  [/Pass --model with one of them\./g, 'Choose one of them as the model in Settings.'],
  [/ or pass --model\./g, ' or name a model in Settings.'],
  [/Pass --workspace \(or choose one in the app\) with/g, 'Choose in the app'],
  [/continue it with `archon resume [^`]+` \(or Resume in the app\)/g, 'continue it with Resume'],
  [/`archon resume [^`]+` continues it/g, 'Resume continues it'],
  [/then resume the run\./g, 'then press Resume.'],
  [/, or pass the address of yours with --restate-ingress and --restate-admin\./g, ', or set the address of yours in Settings → Engine.'],
  [/Check that --cluster-secret-file is the file the workers were started with\./g, 'Check that the cluster secret file in Settings → Engine is the file the workers were started with.'],
  [/ archon approvals lists those that wait\./g, ''],
  [/Re-arm with `archon estop --reset` or the app's Re-arm/g, 'Press Re-arm'],
  [/, or accept these gaps: `archon resume [^`]+ --accept-gaps` ends it completed with gaps\./g, '.'],
  [/ \(the app asks in a dialog of its own; `archon serve` asks on its terminal, or trusts the page when started with --trust-ui\)\./g, ' (it is asked outside this page: in the app\'s own dialog, or on the terminal that started this page\'s host).'],
  // A run's id in full says no more than its first eight characters, which the app shows everywhere.
  [/\b([0-9a-f]{8})-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/g, '$1'],
];

export function inAppTerms(message: string): string {
  return IN_APP.reduce((text, [pattern, replacement]) => text.replace(pattern, replacement), message);
}
