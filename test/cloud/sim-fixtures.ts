/** Shared set-up for the simulated-cloud tests. */
import { parseSimConfig, type SimCloudConfig } from '../../src/cloud/sim/config.js';

/** A small cloud: three workers and one control-plane node, 10 s boots, 4 s terminations. */
export function smallConfig(overrides: Record<string, unknown> = {}): SimCloudConfig {
  return parseSimConfig({
    bootDelaySeconds: 10,
    terminateDelaySeconds: 4,
    groups: [
      { id: 'workers', role: 'worker', size: 3, image: 'os-v1', labels: { pool: 'general' } },
      { id: 'cp', role: 'control-plane', size: 1, image: 'os-v1' },
    ],
    ...overrides,
  });
}
