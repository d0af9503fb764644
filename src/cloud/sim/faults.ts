/**
 * Seeded fault injection for the simulated cloud. Random faults come from rates and a seed;
 * explicit faults ("the next 2 calls are throttled", "the next boot never joins") are queued
 * and take precedence, so a test can provoke exactly the failure it is about.
 *
 * API faults and boot faults draw from two separate streams: how many API calls a caller
 * makes does not change which boots fail.
 */
import { CloudError } from '../provider.js';
import { DEFAULT_FAULTS, type SimFaultConfig } from './config.js';
import { SeededRandom } from './random.js';

export type InjectableApiFault = 'Throttled' | 'Transient';

/** What is persisted so a restarted simulator continues the same fault sequence. */
export interface FaultState {
  readonly config: SimFaultConfig;
  readonly apiRandom: number;
  readonly bootRandom: number;
  readonly queuedApiFaults: readonly InjectableApiFault[];
  readonly queuedBootFailures: number;
}

// A different stream for boots, derived from the same seed.
const BOOT_STREAM = 0x9e3779b9;

export class FaultInjector {
  private config: SimFaultConfig;
  private api: SeededRandom;
  private boot: SeededRandom;
  private queuedApiFaults: InjectableApiFault[];
  private queuedBootFailures: number;

  constructor(config: SimFaultConfig = DEFAULT_FAULTS, restored?: FaultState) {
    this.config = config;
    // Only continue a persisted sequence when it came from the same seed.
    const resume = restored !== undefined && restored.config.seed === config.seed;
    this.api = resume ? SeededRandom.fromState(restored.apiRandom) : new SeededRandom(config.seed);
    this.boot = resume ? SeededRandom.fromState(restored.bootRandom) : new SeededRandom(config.seed ^ BOOT_STREAM);
    this.queuedApiFaults = restored ? [...restored.queuedApiFaults] : [];
    this.queuedBootFailures = restored?.queuedBootFailures ?? 0;
  }

  get settings(): SimFaultConfig {
    return this.config;
  }

  /** Replaces the rates; a changed seed restarts both sequences from it. */
  configure(config: SimFaultConfig): void {
    if (config.seed !== this.config.seed) {
      this.api = new SeededRandom(config.seed);
      this.boot = new SeededRandom(config.seed ^ BOOT_STREAM);
    }
    this.config = config;
  }

  /** The next `count` API calls fail with `code`, before any random fault. */
  queueApiFaults(code: InjectableApiFault, count: number): void {
    for (let i = 0; i < count; i++) this.queuedApiFaults.push(code);
  }

  /** The next `count` instances that boot never join the cluster. */
  queueBootFailures(count: number): void {
    this.queuedBootFailures += count;
  }

  /** Decides the fate of one API call: an error to throw, or undefined to let it through. */
  apiFault(operation: string, groupId?: string): CloudError | undefined {
    const queued = this.queuedApiFaults.shift();
    const code =
      queued ??
      (this.api.chance(this.config.throttleRate)
        ? 'Throttled'
        : this.api.chance(this.config.transientRate)
          ? 'Transient'
          : undefined);
    if (code === undefined) return undefined;
    const where = groupId === undefined ? operation : `${operation} of group ${JSON.stringify(groupId)}`;
    const data = groupId === undefined ? {} : { groupId };
    if (code === 'Throttled') {
      const retryAfterSeconds = this.config.retryAfterSeconds;
      return new CloudError(
        'Throttled',
        `sim cloud: ${where} throttled (rate exceeded); retry after ${retryAfterSeconds}s`,
        {
          ...data,
          retryAfterSeconds,
        },
      );
    }
    return new CloudError('Transient', `sim cloud: ${where} failed with an internal error; retry`, data);
  }

  /** Milliseconds of latency for the next API call. */
  latencyMs(): number {
    const { min, max } = this.config.latencyMs;
    return max > min ? this.api.int(min, max) : min;
  }

  /** Whether an instance that is booting now will join the cluster. */
  bootJoins(): boolean {
    if (this.queuedBootFailures > 0) {
      this.queuedBootFailures--;
      return false;
    }
    return !this.boot.chance(this.config.bootFailureRate);
  }

  snapshot(): FaultState {
    return {
      config: this.config,
      apiRandom: this.api.snapshot,
      bootRandom: this.boot.snapshot,
      queuedApiFaults: [...this.queuedApiFaults],
      queuedBootFailures: this.queuedBootFailures,
    };
  }
}
