/** execute: a Plan's actions → idempotent API and cloud calls, with Events and classified outcomes. */
export { executeActions, type ActionResult, type ExecuteOptions } from './execute.js';
export { describeAction, eventFor } from './describe.js';
export { InFlight } from './in-flight.js';
export { EvictionPacer } from './pdb-pacer.js';
export {
  classifyError,
  httpStatus,
  DEFAULT_RETRY_AFTER_SECONDS,
  QUOTA_RETRY_SECONDS,
  type Outcome,
  type OutcomeKind,
} from './classify.js';
export {
  kubeEventRecorder,
  buildEvent,
  NO_EVENTS,
  type EventRecorder,
  type EventInput,
  type EventReason,
} from './events.js';
export type { ActionDeps, KubeApis } from './actions.js';
export {
  createJob,
  createRebootPod,
  readJobOutcome,
  deleteFinishedJob,
  deleteRebootPod,
  ForeignObjectError,
  JOB_NAME_LABEL,
  type JobApis,
  type JobDeps,
} from './node-jobs.js';
export * from './jobs/index.js';
import { AppsV1Api, BatchV1Api, CoreV1Api, CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import type { KubeApis } from './actions.js';

export function kubeApis(kc: KubeConfig): KubeApis {
  return {
    core: kc.makeApiClient(CoreV1Api),
    apps: kc.makeApiClient(AppsV1Api),
    batch: kc.makeApiClient(BatchV1Api),
    custom: kc.makeApiClient(CustomObjectsApi),
  };
}
