/**
 * The hosts under a simulated cluster's nodes, as node operations see them: a Job pinned to a
 * node ends after a random time (failing on the nodes chosen to fail), and a reboot pod started
 * for the node's current boot takes it NotReady for a while, then brings it back with a new
 * bootID. Actions are applied with the executor's idempotence (a create of an object that
 * exists is a no-op), and what the API server would see is counted: Jobs created per name,
 * reboots and Job successes per node. The NodeOp world and the mixed sequence world both run
 * their node operations here.
 */
import type { SeededRandom } from '../../../src/cloud/sim/random.js';
import { gateJobName, jobLabels, nodeJobName, rebootPodName } from '../../../src/execute/jobs/index.js';
import type { ObservedJob, ObservedPod } from '../../../src/observe/types.js';
import type { Action } from '../../../src/plan/types.js';
import { pod } from '../fixtures.js';

export const NS = 'drydock-system';

/** The world's clock: its time in ms, and a way to run something later. */
export interface HostClock {
  now(): number;
  at(delayMs: number, run: () => void): void;
}

export interface HostJob {
  readonly name: string;
  readonly node: string;
  readonly labels: Record<string, string>;
  readonly endsAt: number;
  readonly fails: boolean;
  readonly attempts: number;
}

interface Boot {
  bootID: string;
  up: boolean;
  upSince: number;
}

export interface HostTiming {
  /** Seconds a node Job runs, and a gate Job: [min, max]. */
  readonly job: readonly [number, number];
  readonly gateJob: readonly [number, number];
  /** Seconds from the reboot pod's start to NotReady, and then until it is back. */
  readonly rebootStart: readonly [number, number];
  readonly down: readonly [number, number];
}

export const HOST_TIMING: HostTiming = { job: [5, 60], gateJob: [2, 30], rebootStart: [1, 5], down: [20, 120] };

type HostAction = Extract<
  Action,
  { kind: 'createNodeJob' | 'createGateJob' | 'createRebootPod' | 'deleteJob' | 'deleteRebootPod' }
>;

export function isHostAction(a: Action): a is HostAction {
  return (
    a.kind === 'createNodeJob' ||
    a.kind === 'createGateJob' ||
    a.kind === 'createRebootPod' ||
    a.kind === 'deleteJob' ||
    a.kind === 'deleteRebootPod'
  );
}

export class NodeHosts {
  readonly jobs = new Map<string, HostJob>();
  readonly rebootPods = new Map<string, { node: string }>();
  /** What the API server saw: creations per Job name, reboots and Job successes per node. */
  readonly jobCreates = new Map<string, number>();
  readonly reboots = new Map<string, number>();
  readonly successes = new Map<string, number>();
  /** Told when a host goes down for its reboot, and when it is back (its pods restart then). */
  onReboot: (node: string, up: boolean) => void = () => undefined;
  private readonly boots = new Map<string, Boot>();
  private bootCount = 0;

  constructor(
    private readonly random: SeededRandom,
    private readonly clock: HostClock,
    /** Whether a node Job created on this node fails (after every attempt its backoffLimit allows). */
    private readonly failsJobs: (node: string) => boolean,
    /** Where a broken rule is written down (shared with the world's own checks). */
    readonly violations: string[] = [],
    private readonly timing: HostTiming = HOST_TIMING,
  ) {}

  private boot(node: string): Boot {
    let b = this.boots.get(node);
    if (b === undefined) {
      b = { bootID: this.newBootID(), up: true, upSince: -Infinity };
      this.boots.set(node, b);
    }
    return b;
  }

  /** A bootID as the kubelet reports it: unique in its first eight characters (reboot pods are named by them). */
  private newBootID(): string {
    return `${(++this.bootCount).toString(16).padStart(8, '0')}-0000-4000-8000-000000000000`;
  }

  /** Gives the node its first boot now, so bootIDs follow the order nodes were added in. */
  addHost(node: string): void {
    this.boot(node);
  }

  bootID(node: string): string {
    return this.boot(node).bootID;
  }

  isUp(node: string): boolean {
    return this.boot(node).up;
  }

  /** When the host last came up (-Infinity if it never rebooted). */
  upSince(node: string): number {
    return this.boot(node).upSince;
  }

  /** Whether a Job runs on the node now, or its reboot is under way (started, not back yet). */
  busy(node: string): string | undefined {
    const now = this.clock.now();
    for (const j of this.jobs.values()) if (j.node === node && j.endsAt > now) return `Job ${j.name} runs`;
    const b = this.boots.get(node);
    if (b !== undefined && !b.up) return 'it is rebooting';
    return undefined;
  }

  jobsObserved(): ObservedJob[] {
    const now = this.clock.now();
    return [...this.jobs.values()].map((j) => {
      const ended = j.endsAt <= now;
      return {
        namespace: NS,
        name: j.name,
        labels: j.labels,
        succeeded: ended && !j.fails,
        failed: ended && j.fails,
        attempts: ended ? j.attempts : 0,
        ...(ended && j.fails ? { failureReason: 'BackoffLimitExceeded' } : {}),
      };
    });
  }

  podsObserved(): ObservedPod[] {
    return [...this.rebootPods].map(([name, p]) => pod(NS, name, p.node, { ownerKind: 'None', phase: 'Succeeded' }));
  }

  /** Applies a Job or reboot action as the executor would; returns whether anything changed. */
  apply(a: HostAction): boolean {
    switch (a.kind) {
      case 'createNodeJob':
        return this.createJob(a);
      case 'createGateJob':
        return this.createGateJob(a);
      case 'createRebootPod':
        return this.createRebootPod(a);
      case 'deleteJob': {
        const j = this.jobs.get(a.name);
        if (j !== undefined && j.endsAt > this.clock.now())
          this.violations.push(`t=${this.clock.now()}: deleteJob of running Job ${a.name}`);
        return this.jobs.delete(a.name);
      }
      case 'deleteRebootPod':
        return this.rebootPods.delete(a.name);
    }
  }

  private counted(name: string, what: string): void {
    const creates = (this.jobCreates.get(name) ?? 0) + 1;
    this.jobCreates.set(name, creates);
    if (creates > 1) this.violations.push(`t=${this.clock.now()}: ${what} ${name} created a second time`);
  }

  private createJob(a: Extract<Action, { kind: 'createNodeJob' }>): boolean {
    const name = nodeJobName(a.operation, a.node);
    if (this.jobs.has(name)) return false; // AlreadyExists: the executor skips
    this.counted(name, 'Job');
    const fails = this.failsJobs(a.node);
    const job: HostJob = {
      name,
      node: a.node,
      labels: jobLabels(a.operation, a.node, 'operation'),
      endsAt: this.clock.now() + this.random.int(...this.timing.job) * 1000,
      fails,
      attempts: fails ? a.job.backoffLimit + 1 : 1,
    };
    this.jobs.set(name, job);
    this.clock.at(job.endsAt - this.clock.now(), () => {
      if (!job.fails) this.successes.set(job.node, (this.successes.get(job.node) ?? 0) + 1);
    });
    return true;
  }

  /** A gate Job: created once per name (gate, step, node, revision). */
  private createGateJob(a: Extract<Action, { kind: 'createGateJob' }>): boolean {
    const name = gateJobName({ ...a, node: a.node });
    if (this.jobs.has(name)) return false;
    this.counted(name, 'gate Job');
    const endsAt = this.clock.now() + this.random.int(...this.timing.gateJob) * 1000;
    this.jobs.set(name, {
      name,
      node: a.node,
      labels: jobLabels(a.operation, a.node, a.step),
      endsAt,
      fails: false,
      attempts: 1,
    });
    // The Job ending is a watch event: it wakes the loop.
    this.clock.at(endsAt - this.clock.now(), () => undefined);
    return true;
  }

  private createRebootPod(a: Extract<Action, { kind: 'createRebootPod' }>): boolean {
    const name = rebootPodName(a.node, a.bootID);
    if (this.rebootPods.has(name)) return false;
    this.rebootPods.set(name, { node: a.node });
    const b = this.boot(a.node);
    if (b.bootID !== a.bootID) return true; // a pod for a boot that is over does nothing
    this.reboots.set(a.node, (this.reboots.get(a.node) ?? 0) + 1);
    this.clock.at(this.random.int(...this.timing.rebootStart) * 1000, () => {
      b.up = false;
      this.onReboot(a.node, false);
      this.clock.at(this.random.int(...this.timing.down) * 1000, () => {
        b.bootID = this.newBootID();
        b.up = true;
        b.upSince = this.clock.now();
        this.onReboot(a.node, true);
      });
    });
    return true;
  }
}
