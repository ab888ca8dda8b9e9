/**
 * Reasoning wrappers, split from what a model says: `<think>…</think>` (an unclosed one runs to
 * the end; a lone `</think>` closes a block the prompt opened), Command-R's
 * `<|START_THINKING|>…<|END_THINKING|>`, Magistral's `[THINK]…[/THINK]`, and gpt-oss Harmony's
 * analysis channel. Harmony's frame tokens are dropped from the content.
 */

const BLOCKS: [open: string, close: string][] = [
  ['<think>', '</think>'],
  ['<thinking>', '</thinking>'],
  ['<seed:think>', '</seed:think>'],
  ['<|START_THINKING|>', '<|END_THINKING|>'],
  ['[THINK]', '[/THINK]'],
];

// An analysis message addressed to a tool (` to=functions.x<|channel|>analysis`) is a call, not reasoning.
const HARMONY_ANALYSIS = /(?<!to=[\w.-]+\s*)<\|channel\|>analysis<\|message\|>([\s\S]*?)(?:<\|end\|>|$)/g;
const HARMONY_FRAME = /<\|start\|>assistant|<\|channel\|>(?:final|commentary)<\|message\|>|<\|(?:end|return|call|message|start)\|>/g;

export interface Split {
  content: string;
  reasoning: string;
}

function splitBlock(text: string, open: string, close: string, reasoning: string[]): string {
  let content = text;
  const orphanClose = content.indexOf(close);
  const firstOpen = content.indexOf(open);
  if (orphanClose >= 0 && (firstOpen < 0 || orphanClose < firstOpen)) {
    reasoning.push(content.slice(0, orphanClose));
    content = content.slice(orphanClose + close.length);
  }
  for (let guard = 0; guard < 100; guard++) {
    const start = content.indexOf(open);
    if (start < 0) break;
    const end = content.indexOf(close, start + open.length);
    reasoning.push(content.slice(start + open.length, end < 0 ? undefined : end));
    content = content.slice(0, start) + (end < 0 ? '' : content.slice(end + close.length));
  }
  return content;
}

export function splitReasoning(text: string): Split {
  const reasoning: string[] = [];
  let content = text;
  for (const [open, close] of BLOCKS) if (content.includes(close) || content.includes(open)) content = splitBlock(content, open, close, reasoning);
  if (content.includes('<|channel|>')) {
    content = content.replace(HARMONY_ANALYSIS, (_match, thought: string) => {
      reasoning.push(thought);
      return '';
    });
  }
  return { content, reasoning: reasoning.map((part) => part.trim()).filter(Boolean).join('\n') };
}

// Functionary v3.2 addresses its words to `all`: `>>>all\nHello` (the first `>>>` may be in the prompt).
const FUNCTIONARY_TEXT = /(^\s*|>>>)all[ \t]*\r?\n/g;

/** Content with Harmony's and Functionary's frames removed, for showing as the model's words; a Harmony call keeps its frame to be read. */
export function plainContent(text: string): string {
  const framed = /to=functions\./.test(text) ? text : text.replace(HARMONY_FRAME, '');
  return (framed.includes('>>>') || /^\s*all\r?\n/.test(framed) ? framed.replace(FUNCTIONARY_TEXT, '') : framed).trim();
}
