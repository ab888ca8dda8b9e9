import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { planReply, stepIdOf, type RecordedRequest, type ScriptedReply } from '../kit/scripted-model-server';

/*
 * A step of many tool turns in a small context: `survey` reads one ~900-character file a turn, then
 * answers; `report` depends on it. The first file ends with facts the compaction note must keep.
 */

export const CONTEXT = 4096;
export const TOOL_TURNS = 30;
/** Said at the end of the first file, past what the context window's last-resort cutting would leave of it. */
export const FIRST_FACTS = 'Invoice 48213 is filed at /srv/archive/ledger-7.csv.';

export function writeSurveyFiles(workspace: string): void {
  mkdirSync(join(workspace, 'data'));
  for (let index = 0; index < TOOL_TURNS; index++) {
    const filler = `FILE-${index} ` + 'lorem ipsum dolor sit amet '.repeat(33);
    writeFileSync(join(workspace, 'data', `f${index}.txt`), index === 0 ? `${filler}\n${FIRST_FACTS}` : filler);
  }
}

/**
 * The model's side. The summariser loses every fact, so only Archon's check keeps them. `before`
 * may answer a survey request itself (given the turn it is at), e.g. to crash the run there.
 */
export function surveyScript(before?: (request: RecordedRequest, turn: number) => ScriptedReply | null): (request: RecordedRequest) => ScriptedReply {
  let turn = 0;
  return (request) => {
    if (request.purpose === 'plan') return planReply([{ id: 'survey', description: 'Read every data file', expected_output: 'what the files say' }, { id: 'report', description: 'Report on the survey', dependencies: ['survey'] }]);
    if (request.purpose === 'summary') return { content: 'The step read data files full of filler text.' };
    if (request.purpose === 'final') return { content: 'done' };
    if (stepIdOf(request) === 'report') return { content: 'reported' };
    const scripted = before?.(request, turn);
    if (scripted) return scripted;
    return turn < TOOL_TURNS ? { toolCalls: [{ name: 'read_file', arguments: { path: `data/f${turn++}.txt` } }] } : { content: `read ${turn} files` };
  };
}

/** Each file's raw text goes to the summariser at most once: how many times each went. */
export function timesSummarised(requests: readonly RecordedRequest[]): number[] {
  const turns = requests.filter((request) => request.purpose === 'summary').map((request) => {
    const text = (request.body.messages ?? []).map((message) => (typeof message.content === 'string' ? message.content : '')).join('\n');
    return text.slice(text.indexOf('Turns to summarise:'));
  });
  return Array.from({ length: TOOL_TURNS }, (_, index) => turns.filter((text) => text.includes(`FILE-${index} `)).length);
}
