import { describe, expect, it } from 'vitest';
import { reachedServer, usageInBody } from '../../../src/core/model/server-request';

describe('what a model server said about a request it received', () => {
  it("reads the tokens of a whole answer, OpenAI's nested details included, and of a stream's last usage chunk", () => {
    const whole = { id: 'x', choices: [], usage: { prompt_tokens: 19, completion_tokens: 1, total_tokens: 20, prompt_tokens_details: { cached_tokens: 0 } } };
    expect(usageInBody(JSON.stringify(whole))).toEqual({ promptTokens: 19, completionTokens: 1, estimated: false });
    const stream = ['data: {"choices":[{"delta":{"content":""}}]}', '', 'data: {"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":1,"completion_tokens_details":{"reasoning_tokens":0}}}', '', 'data: [DONE]', ''].join('\n');
    expect(usageInBody(stream)).toEqual({ promptTokens: 7, completionTokens: 1, estimated: false });
    expect(usageInBody('{"data":[]}')).toEqual({ promptTokens: 0, completionTokens: 0, estimated: false });
  });

  it('a refused connection or an unknown host never reached a server; a timeout or a reset did', () => {
    const fetchFailed = (code: string) => Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error(code), { code }) });
    expect(reachedServer(new Error('Connection error.', { cause: fetchFailed('ECONNREFUSED') }))).toBe(false);
    expect(reachedServer(fetchFailed('ENOTFOUND'))).toBe(false);
    expect(reachedServer(fetchFailed('ECONNRESET'))).toBe(true);
    expect(reachedServer(new DOMException('The operation timed out.', 'TimeoutError'))).toBe(true);
  });
});
