/** The keyed objects and workflows a worker serves, by the names the cluster knows them under. */

/** One built-in tool call per key, the run's call id. */
export const TOOL_SERVICE = 'ArchonTools';
/** Where a worker notes that a call with side effects began, before it begins: keyed by the invocation's key. */
export const CALL_MARKS = 'ArchonCallMarks';
/** Schedules, keyed by schedule id. */
export const SCHEDULE_SERVICE = 'ArchonSchedules';
/** The runs schedules start, keyed by run id. */
export const RUN_SERVICE = 'ArchonRuns';
/** Approvals a desk answers, one workflow per approval id. */
export const APPROVAL_SERVICE = 'ArchonApprovals';
/** The cluster's emergency stop: one key, its latch. */
export const STOP_SERVICE = 'ArchonStop';
/** The runs workers drive as the cluster holds them, keyed by run id: their events (what a desk on another machine follows) and their state (what another worker goes on from). */
export const RUN_LOG = 'ArchonRunLog';
