/**
 * The simulated cloud's persistent state: one JSON file in the state directory, replaced
 * atomically (write a temporary file, flush it, rename it over the old one), so a simulator
 * killed at any instant restarts with either the previous or the next state, never half of one.
 */
import { CodedError } from '../../errors.js';
import { mkdir, open, readFile, rename, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { NodeRole } from '../../spec/model.js';
import type { InstanceState } from '../provider.js';
import type { SimResources } from './config.js';
import type { FaultState } from './faults.js';

export interface InstanceRecord {
  readonly id: string;
  readonly image: string;
  readonly state: InstanceState;
  /** Epoch milliseconds. */
  readonly createdAt: number;
  /** pending: when it finishes booting. */
  readonly bootAt?: number;
  /** Decided at boot: whether its Node joins the cluster (false: a boot that never joins). */
  readonly joins: boolean;
  /** Its Node has been created. */
  readonly registered: boolean;
  /** terminating: when it is gone. */
  readonly goneAt?: number;
}

export interface GroupRecord {
  readonly id: string;
  readonly role: NodeRole;
  readonly image: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly resources: SimResources;
  readonly bootDelaySeconds?: number;
  /** Counter behind instance ids, so an id is never reused within a group. */
  readonly nextInstance: number;
  /** Sorted by id. */
  readonly instances: readonly InstanceRecord[];
  /** A Bottlerocket group: versions published to its update repository at run time, in order. */
  readonly bottlerocketReleases?: readonly string[];
}

export interface SimState {
  readonly version: 1;
  /** Sorted by id. */
  readonly groups: readonly GroupRecord[];
  readonly faults?: FaultState;
}

export const STATE_FILE = 'sim-cloud-state.json';

/** A state file that cannot be read back: names the file and what to do. */
export class SimStateError extends CodedError<'InvalidSimState', { readonly file: string }> {
  override readonly name = 'SimStateError';
  constructor(message: string, data: { readonly file: string }) {
    super('InvalidSimState', message, data);
  }
}

export interface StateStore {
  load(): Promise<SimState | undefined>;
  save(state: SimState): Promise<void>;
}

/** Keeps the state in memory only: for tests that do not care about restarts. */
export class MemoryStateStore implements StateStore {
  private saved: string | undefined;
  async load(): Promise<SimState | undefined> {
    return this.saved === undefined ? undefined : (JSON.parse(this.saved) as SimState);
  }
  async save(state: SimState): Promise<void> {
    this.saved = JSON.stringify(state);
  }
}

export class FileStateStore implements StateStore {
  readonly file: string;
  private seq = 0;

  constructor(readonly dir: string) {
    this.file = path.join(dir, STATE_FILE);
  }

  async load(): Promise<SimState | undefined> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw new SimStateError(`cannot read sim cloud state ${this.file}: ${(err as Error).message}`, {
        file: this.file,
      });
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new SimStateError(
        `sim cloud state ${this.file} is not valid JSON; restore it or remove it to start the simulated cloud afresh`,
        { file: this.file },
      );
    }
    if (!isSimState(parsed)) {
      throw new SimStateError(
        `sim cloud state ${this.file} has an unknown layout (expected version 1); remove it to start afresh`,
        { file: this.file },
      );
    }
    return parsed;
  }

  async save(state: SimState): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    const tmp = `${this.file}.${process.pid}.${this.seq++}.tmp`;
    const handle = await open(tmp, 'w', 0o600);
    try {
      await handle.writeFile(`${JSON.stringify(state, null, 2)}\n`, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    try {
      await rename(tmp, this.file);
    } catch (err) {
      await unlink(tmp).catch(() => undefined);
      throw err;
    }
  }
}

function isSimState(value: unknown): value is SimState {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as { version?: unknown; groups?: unknown };
  return v.version === 1 && Array.isArray(v.groups);
}
