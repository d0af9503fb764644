/**
 * The MutexRunConfig kind: the OpenShift node upgrade, which the Machine Config Operator does
 * and drydock admits node by node (index.ts). It replaces no node, keeps no autoscaler paused
 * and has no control-plane node of its own (OpenShift upgrades its control plane first).
 */
import type { OperationKind } from '../kind.js';
import { planRun } from './index.js';

export const mcoKind: OperationKind = {
  name: 'MutexRunConfig',
  read(round) {
    return {
      running: false,
      controlPlanes: [],
      plan: (gates) =>
        round.desired.mutexRunConfigs.map((run) =>
          planRun(round, run, gates, { jobNamespace: round.options.jobNamespace }),
        ),
    };
  },
};
