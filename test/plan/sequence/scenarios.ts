/** Scenario families for the sequence tests, each a function of its seed. */
import { SeededRandom as Random } from '../../../src/cloud/sim/random.js';
import type { Scenario } from './driver.js';
import { maintenanceWindow, policy } from '../fixtures.js';
import { nodeOp } from '../nodeop/fixtures.js';
import type { Gates, MixedScenario } from './mixed.js';
import type { MaintenanceWindow } from '../../../src/spec/model.js';

export const STEADY = { boot: [60, 60], terminate: 10, reschedule: 5, podReady: 15 } as const;
const STEADY_DRAIN = {
  enabled: true,
  force: false,
  ignoreDaemonSets: true,
  deleteEmptyDirData: false,
  onTimeout: 'skipNode',
} as const;

/**
 * Where each mixed run starts, and the windows it may use: a plain Monday; the Sunday New York
 * springs forward (07:00 UTC, two hours into the run); the Sunday Berlin does (01:00 UTC). Each
 * window is open part of every hour or two, in its own zone's wall-clock hours.
 */
export const STARTS = ['2026-03-02T10:00:00Z', '2026-03-08T05:00:00Z', '2026-03-29T00:00:00Z'] as const;
export const WINDOWS: readonly MaintenanceWindow[] = [
  // 01:00-01:40, 03:00-03:40 ... local: 06:00Z, then (EDT) 07:00Z, 09:00Z; with EST kept, 08:00Z.
  // Odd hours, so no opening falls in the hour the spring-forward skips.
  maintenanceWindow('ny-odd-hours', 'America/New_York', [{ cron: '0 1-23/2 * * *', durationSeconds: 2400 }]),
  // Opens at :20 and :50 local (:50 and :20 UTC) for 15 minutes.
  maintenanceWindow('kolkata-halves', 'Asia/Kolkata', [{ cron: '20,50 * * * *', durationSeconds: 900 }]),
  // The odd local hours, their first 30 minutes.
  maintenanceWindow('berlin-odd-hours', 'Europe/Berlin', [{ cron: '0 1-23/2 * * *', durationSeconds: 1800 }]),
  maintenanceWindow('sydney-quarters', 'Australia/Sydney', [{ cron: '*/30 * * * *', durationSeconds: 600 }]),
];

/** Random delays, boots that never join, refused evictions, restarts mid-round. */
export function chaos(seed: number): Scenario {
  const r = new Random(seed * 7919);
  const nodes = r.int(4, 10);
  return {
    seed,
    nodes,
    ...(seed % 4 === 0 ? { controlPlane: 3 } : {}),
    budget: r.int(1, 3),
    rollout: {
      maxSurge: r.int(1, 3),
      maxUnavailable: r.chance(0.5) ? 0 : r.int(1, 2),
      joinTimeoutSeconds: 300,
      healthGate: { minReadySeconds: r.int(0, 30) },
      ...(r.chance(0.3) ? { canary: { nodes: 1, soakSeconds: r.int(30, 300) } } : {}),
      drain: {
        enabled: true,
        force: false,
        ignoreDaemonSets: true,
        deleteEmptyDirData: false,
        timeoutSeconds: 900,
        onTimeout: 'skipNode',
      },
    },
    timing: { boot: [20, 200], terminate: r.int(1, 30), reschedule: r.int(1, 10), podReady: r.int(1, 30) },
    faults: { neverJoins: 0.15, evict429: 0.2 },
    crash: 0.15,
    // A person's NodeMaintenance, merged at the start or mid-rollout, deleted a while later.
    ...(r.chance(0.5)
      ? { maintenance: { node: `worker-${r.int(0, nodes - 1)}`, from: (seed % 3) * 90, seconds: r.int(60, 900) } }
      : {}),
    images: r.chance(0.3)
      ? [
          [0, 'img:v2'],
          [r.int(30, 400), r.chance(0.5) ? 'img:v1' : 'img:v3'],
        ]
      : [[0, 'img:v2']],
    options: { maxAttempts: 5 },
    // Open part of every half hour or hour in its own zone's wall-clock time: starts must wait,
    // nodes in flight go on.
    ...(r.chance(0.3) ? { window: WINDOWS[seed % WINDOWS.length] } : {}),
  };
}

/** Faults with stopOnFailure: the rollout may halt, and must halt cleanly. */
export function halting(seed: number): Scenario {
  const base = chaos(seed + 1000);
  const onTimeout = (['halt', 'skipNode', 'force'] as const)[seed % 3] ?? 'halt';
  return {
    ...base,
    rollout: {
      ...base.rollout,
      stopOnFailure: true,
      // Short drains against stubborn PDBs, so drain timeouts happen too.
      drain: {
        enabled: true,
        force: false,
        ignoreDaemonSets: true,
        deleteEmptyDirData: false,
        timeoutSeconds: 60,
        onTimeout,
      },
    },
    faults: { neverJoins: 0.3, evict429: 0.5 },
  };
}

/**
 * A control-plane group mid-rollout when the image is reverted, with drydock stopping right
 * after every surge it makes: the group must end the size it started.
 */
export function revertRace(seed: number): Scenario {
  const r = new Random(seed * 104_729);
  return {
    seed,
    nodes: r.int(2, 4),
    controlPlane: r.int(1, 3),
    budget: r.int(1, 2),
    rollout: { maxSurge: r.int(1, 2), joinTimeoutSeconds: 300, healthGate: { minReadySeconds: r.int(0, 20) } },
    timing: { boot: [20, 120], terminate: r.int(1, 10), reschedule: r.int(1, 5), podReady: r.int(1, 15) },
    faults: { neverJoins: 0, evict429: r.chance(0.5) ? 0.2 : 0 },
    crash: r.chance(0.5) ? 0.1 : 0,
    stopAfterSurge: true,
    images: [
      [0, 'img:v2'],
      [r.int(5, 300), 'img:v1'],
    ],
  };
}

/**
 * A NodeImage replace rollout, a NodeOp with a Job and a reboot per node, and NodeMaintenances
 * (one on the node the rollout is about to take, one added mid-run on a node the NodeOp has in
 * flight, one on a node a person cordoned), with slow boots, refused evictions and restarts.
 */
export function mixed(seed: number): MixedScenario {
  const r = new Random(seed * 15_485_863);
  const nodes = r.int(4, 7);
  const drain = {
    enabled: r.chance(0.5),
    force: false,
    ignoreDaemonSets: true,
    deleteEmptyDirData: true,
    timeoutSeconds: 1800,
    onTimeout: 'force' as const,
  };
  return {
    seed,
    nodes,
    budget: r.int(2, 3),
    rollout: {
      maxSurge: r.int(1, 2),
      joinTimeoutSeconds: 300,
      healthGate: { minReadySeconds: r.int(0, 30) },
      drain: { ...STEADY_DRAIN, timeoutSeconds: 1800 },
    },
    op: nodeOp('patch', {
      cordon: true,
      rebootOnSuccess: true,
      concurrency: r.int(1, 2),
      drain,
      rollout: policy({ drain, healthGate: { minReadySeconds: r.int(0, 20) } }),
    }),
    timing: { boot: [20, 150], terminate: r.int(1, 20), reschedule: r.int(1, 10), podReady: r.int(1, 20) },
    faults: { neverJoins: 0.1, evict429: 0.2 },
    crash: 0.1,
    handNode: `worker-${r.int(0, nodes - 1)}`,
    midAt: r.int(30, 600),
    hold: r.int(0, 300),
    ...(r.chance(0.3) ? { earlyRemoval: r.int(10, 200) } : {}),
    ...mixedGates(seed),
  };
}

/** The gates of a mixed run: a canary, approvals (right and wrong ones) and a window, per spec, by seed. */
function mixedGates(seed: number): { start: number; gates: { image: Gates; op: Gates }; maxSeconds: number } {
  // A generator of its own, so the runs' other draws stay what they were.
  const r = new Random(seed * 7_368_787);
  const startIndex = seed % STARTS.length;
  const start = Date.parse(STARTS[startIndex] ?? STARTS[0]);
  // On a DST day the image's window is in the zone that changes: its openings move by an hour.
  const dstWindow = startIndex === 1 ? WINDOWS[0] : startIndex === 2 ? WINDOWS[2] : undefined;
  const gates = (kind: 'image' | 'op'): Gates => {
    const required = (['none', 'start', 'afterCanary', 'afterCanary'] as const)[r.int(0, 3)] ?? 'none';
    const approvalAt = r.int(60, kind === 'image' ? 5400 : 1800);
    const drawn = r.chance(kind === 'image' ? 0.6 : 0.3) ? WINDOWS[r.int(0, WINDOWS.length - 1)] : undefined;
    const window = kind === 'image' && dstWindow !== undefined ? dstWindow : drawn;
    return {
      canary: r.chance(kind === 'image' ? 0.8 : 0.5) || required === 'afterCanary' ? r.int(30, 600) : undefined,
      required,
      approvalAt,
      // Wrong approvals come before the right one, at seeded instants.
      wrong: (['stage', 'version', 'target'] as const)
        .filter(() => r.chance(0.7))
        .map((how) => ({
          how,
          at: r.int(0, approvalAt),
        })),
      ...(window !== undefined ? { window } : {}),
    };
  };
  return { start, gates: { image: gates('image'), op: gates('op') }, maxSeconds: 24 * 3600 };
}
