import type { ToolResult } from '../../shared/schemas/tool';
import { TOOL_LIMITS, type BuiltinToolInput } from '../../shared/tools/catalogue';
import { result, type ExecutorContext } from './tool-context';

/** GET with a size and time cap; refused outright while the operator keeps network tools off. */
export async function httpGet(args: BuiltinToolInput<'http_get'>, context: ExecutorContext): Promise<ToolResult> {
  if (!context.networkTools) {
    return result('denied', 'Network tools are turned off by the operator (Settings → Tools → network tools). Work with what is in the workspace instead.');
  }
  const response = await fetch(args.url, { signal: context.signal, redirect: 'follow' });
  const reader = response.body?.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let truncated = false;
  while (reader) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    size += value.length;
    if (size >= TOOL_LIMITS.readBytes) {
      truncated = true;
      await reader.cancel();
      break;
    }
  }
  const body = Buffer.concat(chunks).subarray(0, TOOL_LIMITS.readBytes).toString('utf8');
  const status = response.ok ? 'success' : 'error';
  return result(status, `HTTP ${response.status}\n${body}${truncated ? `\n[truncated at ${TOOL_LIMITS.readBytes} bytes]` : ''}`, { status: response.status, contentType: response.headers.get('content-type') });
}
