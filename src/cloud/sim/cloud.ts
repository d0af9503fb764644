/**
 * The simulated cloud: scaling groups whose instances boot after a delay and join the cluster
 * as Nodes, go `terminating` when removed and disappear after another delay. It behaves like a
 * cloud API on purpose: calls can be slow, throttled or fail, quotas run out, and some
 * instances boot but never join.
 *
 * Every change is written to the state store before it counts (a failed write changes
 * nothing), and boot/termination times are stored as instants, so a restarted simulator
 * picks up every instance exactly where it was.
 */
import { randomUUID } from 'node:crypto';
import { pino, type Logger } from 'pino';
import { CloudError, type GroupDescription } from '../provider.js';
import type { SimBottlerocketConfig, SimCloudConfig, SimFaultConfig } from './config.js';
import { realClock, type Clock, type TimerHandle } from './clock.js';
import { FaultInjector, type InjectableApiFault } from './faults.js';
import { bottlerocketOsImage, buildNode, MemoryNodeRegistry, nodeNameFor, type NodeRegistry } from './nodes.js';
import {
  checkCount,
  checkImage,
  checkInstanceId,
  checkQuota,
  createInstances,
  describe,
  findGroup,
  mergeConfig,
  replaceGroup,
  replaceInstance,
} from './records.js';
import { MemoryStateStore, type GroupRecord, type InstanceRecord, type SimState, type StateStore } from './state.js';

export interface SimCloudOptions {
  readonly config: SimCloudConfig;
  /** Default: memory only (nothing survives a restart). */
  readonly store?: StateStore;
  /** Default: memory only (no cluster). */
  readonly nodes?: NodeRegistry;
  readonly clock?: Clock;
  readonly logger?: Logger;
  /** Delay before retrying a Node create/delete the cluster refused. Default 2000 ms. */
  readonly retryDelayMs?: number;
}

export class SimCloud {
  private state: SimState;
  private readonly faults: FaultInjector;
  private readonly timers = new Map<string, TimerHandle>();
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;

  private constructor(
    private readonly config: SimCloudConfig,
    private readonly store: StateStore,
    readonly nodes: NodeRegistry,
    readonly clock: Clock,
    private readonly log: Logger,
    private readonly retryDelayMs: number,
    state: SimState,
  ) {
    this.state = state;
    this.faults = new FaultInjector(config.faults, state.faults);
  }

  /** Loads the persisted state (or creates the configured groups) and resumes every timer. */
  static async open(options: SimCloudOptions): Promise<SimCloud> {
    const store = options.store ?? new MemoryStateStore();
    const clock = options.clock ?? realClock;
    const log = options.logger ?? pino({ level: 'silent' });
    const loaded = await store.load();
    const cloud = new SimCloud(
      options.config,
      store,
      options.nodes ?? new MemoryNodeRegistry(),
      clock,
      log,
      options.retryDelayMs ?? 2000,
      loaded ?? { version: 1, groups: [] },
    );
    await cloud.exclusive(async () => {
      const { state, orphans } = mergeConfig(cloud.state, cloud.config, clock.now());
      for (const group of orphans)
        log.warn({ group }, 'group kept from saved state but missing from the configuration');
      await cloud.commit(state);
    });
    cloud.schedule();
    log.info({ groups: cloud.state.groups.length, restored: loaded !== undefined }, 'sim cloud started');
    return cloud;
  }

  // ---- the cloud API (subject to latency and injected faults) ----

  async listGroups(): Promise<readonly string[]> {
    return this.api('listGroups', undefined, async () => this.state.groups.map((g) => g.id));
  }

  async describeGroup(groupId: string): Promise<GroupDescription> {
    return this.api('describeGroup', groupId, async () => describe(findGroup(this.state, groupId)));
  }

  async setGroupImage(groupId: string, image: string): Promise<void> {
    return this.api('setGroupImage', groupId, () =>
      this.exclusive(async () => {
        const group = findGroup(this.state, groupId);
        checkImage(groupId, image);
        if (group.image === image) return;
        await this.commit(replaceGroup(this.state, { ...group, image }));
        this.log.info({ group: groupId, image }, 'group image set');
      }),
    );
  }

  async addCapacity(groupId: string, count: number): Promise<readonly string[]> {
    return this.api('addCapacity', groupId, () =>
      this.exclusive(async () => {
        const group = findGroup(this.state, groupId);
        checkCount(groupId, count);
        checkQuota(this.state, this.config.quota, group, count);
        const grown = createInstances(group, count, this.clock.now(), this.config.bootDelaySeconds);
        await this.commit(replaceGroup(this.state, grown));
        const ids = grown.instances.slice(group.instances.length).map((i) => i.id);
        this.schedule();
        this.log.info({ group: groupId, instances: ids, image: group.image }, 'instances created');
        return ids;
      }),
    );
  }

  async removeInstance(groupId: string, instanceId: string): Promise<void> {
    return this.api('removeInstance', groupId, () =>
      this.exclusive(async () => {
        const group = findGroup(this.state, groupId);
        checkInstanceId(groupId, instanceId);
        const instance = group.instances.find((i) => i.id === instanceId);
        // Already gone or going: removing is idempotent.
        if (!instance || instance.state === 'terminating') return false;
        const goneAt = this.clock.now() + this.config.terminateDelaySeconds * 1000;
        const { bootAt: _bootAt, ...rest } = instance;
        await this.commit(replaceInstance(this.state, groupId, { ...rest, state: 'terminating', goneAt }));
        this.cancelTimer(timerKey(groupId, instanceId, 'boot'));
        this.schedule();
        this.log.info({ group: groupId, instance: instanceId }, 'instance terminating');
        return true;
      }).then(async (terminating) => {
        // The Node goes at once, as when a VM is shut down; if the cluster refuses, the
        // deletion is retried when the instance is gone. Outside the queue: other instances'
        // changes do not wait for this one's API call.
        if (terminating) await this.deregister(groupId, instanceId);
      }),
    );
  }

  // ---- fault control (not itself subject to faults) ----

  get faultSettings(): SimFaultConfig {
    return this.faults.settings;
  }

  async configureFaults(settings: SimFaultConfig): Promise<void> {
    await this.exclusive(async () => {
      this.faults.configure(settings);
      await this.commit(this.state);
    });
  }

  async injectApiFaults(code: InjectableApiFault, count: number): Promise<void> {
    await this.exclusive(async () => {
      this.faults.queueApiFaults(code, count);
      await this.commit(this.state);
    });
  }

  async failNextBoots(count: number): Promise<void> {
    await this.exclusive(async () => {
      this.faults.queueBootFailures(count);
      await this.commit(this.state);
    });
  }

  // ---- the update repositories of Bottlerocket groups (not subject to faults) ----

  /** Publishes a version to a Bottlerocket group's update repository, as a new release lands. */
  async publishBottlerocketRelease(groupId: string, version: string): Promise<void> {
    this.assertOpen();
    await this.exclusive(async () => {
      const group = findGroup(this.state, groupId);
      if (this.bottlerocketConfig(groupId) === undefined)
        throw new CloudError(
          'Permanent',
          `sim cloud: group "${groupId}" is not a Bottlerocket group; give it bottlerocket in the sim config`,
          { groupId },
        );
      if (!/^[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.+-]*)?$/.test(version))
        throw new CloudError(
          'Permanent',
          `sim cloud: ${JSON.stringify(version)} is not a Bottlerocket version (X.Y.Z, e.g. 1.21.0)`,
          { groupId },
        );
      const releases = group.bottlerocketReleases ?? [];
      if (releases.includes(version)) return;
      await this.commit(replaceGroup(this.state, { ...group, bottlerocketReleases: [...releases, version] }));
      this.log.info({ group: groupId, version }, 'bottlerocket release published');
    });
  }

  /** The Bottlerocket groups by id, each with every version its update repository offers now. */
  bottlerocketGroups(): ReadonlyMap<string, SimBottlerocketConfig> {
    const groups = new Map<string, SimBottlerocketConfig>();
    for (const def of this.config.groups) {
      if (def.bottlerocket === undefined) continue;
      const published = this.state.groups.find((g) => g.id === def.id)?.bottlerocketReleases ?? [];
      const available = [...new Set([...def.bottlerocket.available, ...published])];
      groups.set(def.id, { ...def.bottlerocket, available });
    }
    return groups;
  }

  private bottlerocketConfig(groupId: string): SimBottlerocketConfig | undefined {
    return this.config.groups.find((g) => g.id === groupId)?.bottlerocket;
  }

  /** The persisted record of one group (instances with their boot/termination instants). */
  inspectGroup(groupId: string): GroupRecord {
    return findGroup(this.state, groupId);
  }

  /** Resolves once every change queued so far is done. */
  async idle(): Promise<void> {
    await this.exclusive(async () => undefined);
  }

  /** Stops every timer and waits for the change in flight; later calls fail as Transient. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const t of this.timers.values()) t.cancel();
    this.timers.clear();
    await this.queue.catch(() => undefined);
    this.log.info('sim cloud stopped');
  }

  // ---- internals ----

  private async api<T>(operation: string, groupId: string | undefined, fn: () => Promise<T>): Promise<T> {
    this.assertOpen();
    const latency = this.faults.latencyMs();
    if (latency > 0) await this.clock.sleep(latency);
    const fault = this.faults.apiFault(operation, groupId);
    if (fault) {
      this.log.info({ operation, group: groupId, code: fault.code }, 'fault injected');
      throw fault;
    }
    return fn();
  }

  private assertOpen(): void {
    if (this.closed) throw new CloudError('Transient', 'sim cloud is shut down; retry once it runs again');
  }

  /** Runs changes one at a time, in call order. */
  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn, fn);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Persists `next` (with the fault generator's position); only then does it become the state. */
  private async commit(next: SimState): Promise<void> {
    const withFaults: SimState = { ...next, faults: this.faults.snapshot() };
    try {
      await this.store.save(withFaults);
    } catch (err) {
      this.log.error({ reason: (err as NodeJS.ErrnoException).code ?? 'unknown' }, 'sim cloud state not saved');
      throw new CloudError(
        'Transient',
        `sim cloud: cannot save state (${(err as Error).message}); nothing was changed, retry`,
      );
    }
    this.state = withFaults;
  }

  /** Sets a timer for every instance waiting for something; idempotent. */
  private schedule(): void {
    if (this.closed) return;
    const now = this.clock.now();
    for (const group of this.state.groups) {
      for (const inst of group.instances) {
        if (inst.state === 'pending' && inst.bootAt !== undefined) {
          this.setTimer(timerKey(group.id, inst.id, 'boot'), inst.bootAt - now, () => this.boot(group.id, inst.id));
        } else if (inst.state === 'terminating' && inst.goneAt !== undefined) {
          this.setTimer(timerKey(group.id, inst.id, 'gone'), inst.goneAt - now, () =>
            this.finishTermination(group.id, inst.id),
          );
        } else if (inst.state === 'running' && inst.joins && !inst.registered) {
          this.joinLater(group.id, inst.id, 0);
        }
      }
    }
  }

  /** Runs `fn` after `delayMs`, in the queue of changes unless `queued` is false (it queues its own). */
  private setTimer(key: string, delayMs: number, fn: () => Promise<void>, queued = true): void {
    if (this.timers.has(key)) return;
    this.timers.set(
      key,
      this.clock.setTimer(delayMs, () => {
        this.timers.delete(key);
        if (this.closed) return undefined;
        return (queued ? this.exclusive(fn) : fn()).catch((err: unknown) => {
          this.log.error({ timer: key, reason: (err as Error).message }, 'sim cloud timer failed');
          this.retryLater(key, fn, queued);
        });
      }),
    );
  }

  private retryLater(key: string, fn: () => Promise<void>, queued = true): void {
    if (this.closed) return;
    this.setTimer(key, this.retryDelayMs, fn, queued);
  }

  private cancelTimer(key: string): void {
    this.timers.get(key)?.cancel();
    this.timers.delete(key);
  }

  /** A pending instance finishes booting: it runs, and joins the cluster unless a fault says otherwise. */
  private async boot(groupId: string, id: string): Promise<void> {
    const inst = this.findInstance(groupId, id);
    if (!inst || inst.state !== 'pending') return;
    const joins = this.faults.bootJoins();
    const { bootAt: _bootAt, ...rest } = inst;
    await this.commit(replaceInstance(this.state, groupId, { ...rest, state: 'running', joins }));
    this.log.info(
      { group: groupId, instance: id, joins },
      joins ? 'instance booted' : 'instance booted but will never join',
    );
    if (joins) this.joinLater(groupId, id, 0);
  }

  /** Registers the instance's Node in `delayMs`: the API call outside the queue, so instances join side by side. */
  private joinLater(groupId: string, id: string, delayMs: number): void {
    this.setTimer(timerKey(groupId, id, 'register'), delayMs, () => this.register(groupId, id), false);
  }

  private async register(groupId: string, id: string): Promise<void> {
    const group = this.state.groups.find((g) => g.id === groupId);
    const inst = group?.instances.find((i) => i.id === id);
    if (!group || !inst || inst.state !== 'running' || !inst.joins || inst.registered) return;
    // A Bottlerocket instance reports the OS it boots, not the cloud image it was made from.
    const br = this.bottlerocketConfig(groupId);
    const node = buildNode({
      groupId,
      instanceId: id,
      role: group.role,
      image: inst.image,
      labels: group.labels,
      resources: group.resources,
      bootID: randomUUID(),
      ...(br === undefined ? {} : { osImage: bottlerocketOsImage(br.version, br.variant) }),
    });
    try {
      await this.nodes.register(node);
    } catch (err) {
      this.log.warn({ node: node.metadata?.name, reason: kubeReason(err) }, 'node registration failed; retrying');
      this.joinLater(groupId, id, this.retryDelayMs);
      return;
    }
    await this.exclusive(async () => {
      // Read again: the instance may have been removed while its Node was created (its
      // termination deletes the Node again).
      const now = this.findInstance(groupId, id);
      if (!now || now.state !== 'running' || now.registered) return;
      await this.commit(replaceInstance(this.state, groupId, { ...now, registered: true }));
      this.log.info({ group: groupId, instance: id, node: node.metadata?.name }, 'node joined');
    });
  }

  private async deregister(groupId: string, id: string): Promise<boolean> {
    const name = nodeNameFor(groupId, id);
    try {
      await this.nodes.deregister(name);
      return true;
    } catch (err) {
      this.log.warn({ node: name, reason: kubeReason(err) }, 'node deletion failed; retrying');
      return false;
    }
  }

  private async finishTermination(groupId: string, id: string): Promise<void> {
    const inst = this.findInstance(groupId, id);
    if (!inst || inst.state !== 'terminating') return;
    if (!(await this.deregister(groupId, id))) {
      this.retryLater(timerKey(groupId, id, 'gone'), () => this.finishTermination(groupId, id));
      return;
    }
    const group = findGroup(this.state, groupId);
    await this.commit(replaceGroup(this.state, { ...group, instances: group.instances.filter((i) => i.id !== id) }));
    this.log.info({ group: groupId, instance: id }, 'instance gone');
  }

  private findInstance(groupId: string, id: string): InstanceRecord | undefined {
    return this.state.groups.find((g) => g.id === groupId)?.instances.find((i) => i.id === id);
  }
}

function timerKey(groupId: string, id: string, what: 'boot' | 'gone' | 'register'): string {
  return `${groupId}/${id}/${what}`;
}

/** The HTTP status of a Kubernetes API failure, or the error's name; never its body. */
function kubeReason(err: unknown): string {
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'number' || typeof code === 'string') return String(code);
  return err instanceof Error ? err.name : 'unknown';
}
