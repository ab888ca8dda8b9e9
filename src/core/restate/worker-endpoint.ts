import type { IncomingMessage, ServerResponse } from 'node:http';
import * as restate from '@restatedev/restate-sdk';
import type { Log } from '../log';
import { approvalWorkflow } from './cluster-approvals';
import { stopObject } from './cluster-stop';
import { runLogObject } from './run-log';
import { runServices, type RunWorker } from './run-service';
import { toolServices, type ToolWorker } from './tool-service';

/**
 * A worker's endpoint as a node:http handler: its tool calls, schedules, runs, their events and
 * approvals, and the cluster's emergency stop, over HTTP/1.1
 * request-response, so any worker behind one address may serve any attempt. Restate's own warnings
 * and errors go to Archon's log.
 */
export function workerEndpoint(tools: ToolWorker, runs: RunWorker, log?: Log): (request: IncomingMessage, response: ServerResponse) => void {
  const endpoint = restate.endpoint();
  for (const service of [...toolServices(tools), ...runServices(runs), approvalWorkflow(runs.secret), stopObject(runs.secret), runLogObject(runs.secret)]) endpoint.bind(service);
  endpoint.setLogger((meta, message, ...rest) => {
    if (meta.level === 'warn' || meta.level === 'error') log?.[meta.level]({ invocationId: meta.context?.invocationId, worker: tools.id }, [message, ...rest].map(String).join(' '));
  });
  return endpoint.http1Handler();
}
