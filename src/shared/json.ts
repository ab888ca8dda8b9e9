/** JSON from outside (a socket, a file, a stored column): undefined when it is not JSON, never an exception. */
export function parseJsonOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
