/** Why an MCP server could not be used, in words the operator can act on; each message names the server. */
export type McpFailureKind = 'not_found' | 'crashed' | 'timeout' | 'protocol' | 'sandbox' | 'unreachable' | 'sealed';

export interface McpFailure {
  kind: McpFailureKind;
  message: string;
}

export class McpServerError extends Error {
  constructor(readonly failure: McpFailure) {
    super(failure.message);
    this.name = 'McpServerError';
  }
}
