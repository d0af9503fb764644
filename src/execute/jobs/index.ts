/** The objects drydock runs on nodes: operation Jobs, gate Jobs, reboot pods, the Bottlerocket update Job; their names and outcomes. */
export * from '../../protocol/jobs.js';
export * from './node-job.js';
export * from './reboot-pod.js';
export * from './gate-job.js';
export * from '../../protocol/job-outcome.js';
export * from './bottlerocket-update.js';
