/** A request the engine answers with an OpenAI-shaped error: `{"error": {"message", "type"}}` and this status. */
export class RequestError extends Error {
  constructor(
    readonly status: number,
    readonly type: 'invalid_request_error' | 'authentication_error' | 'not_found_error' | 'server_error' | 'overloaded_error',
    message: string,
  ) {
    super(message);
  }
}
