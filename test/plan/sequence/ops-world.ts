/**
 * The sequence world with node operations on its nodes: the hosts under them (nodeop/hosts.ts)
 * run NodeOp Jobs and reboot when a reboot pod starts (NotReady, then back with a new bootID,
 * its pods restarting), and a person may cordon a node by hand. The replace rollout's cloud,
 * nodes and workloads are the World's own.
 */
import type { ObservedState } from '../../../src/observe/types.js';
import type { Action } from '../../../src/plan/index.js';
import type { SeededRandom as Random } from '../../../src/cloud/sim/random.js';
import { isHostAction, NodeHosts } from '../nodeop/hosts.js';
import { World, type WorldOptions } from './world.js';

/** Far enough ahead that a pod on a host that is down never counts as Ready. */
const DOWN_MS = 365 * 24 * 3600_000;

export class OpsWorld extends World {
  readonly hosts: NodeHosts;
  /** Nodes a person cordoned: drydock never uncordons them. */
  readonly cordonedByHand = new Set<string>();

  constructor(
    options: WorldOptions,
    random: Random,
    start: number,
    log: (line: string) => void,
    /** Chance the host under a node fails every Job it runs (drawn once per host). */
    jobFails: number,
  ) {
    super(options, random, start, log);
    const clock = { now: () => this.now, at: (ms: number, run: () => void) => this.at(ms, run) };
    this.hosts = new NodeHosts(random, clock, () => random.chance(jobFails), this.violations);
    for (const name of [...this.nodes.keys()].sort()) this.hosts.addHost(name);
    this.hosts.onReboot = (node, up) => this.restartPods(node, up);
  }

  /** A host going down takes its pods' readiness with it; they are Ready again a while after it is back. */
  private restartPods(node: string, up: boolean): void {
    const ready = this.options.timing.podReady * 1000;
    for (const p of this.pods.values()) {
      if (p.nodeName !== node || p.terminating) continue;
      p.readyAt = up ? this.now + ready : this.now + DOWN_MS;
    }
    this.log(up ? `${node} is back (bootID ${this.hosts.bootID(node)})` : `${node} goes down for its reboot`);
    if (up) this.at(ready, () => undefined);
  }

  /** Ready as the node's status would say: its instance runs and its host is up. */
  override isReady(node: { readonly name: string; readonly providerID: string }): boolean {
    return super.isReady(node) && this.hosts.isUp(node.name);
  }

  cordonByHand(node: string): void {
    const n = this.nodes.get(node);
    if (n === undefined) throw new Error(`no node ${node} to cordon by hand`);
    n.unschedulable = true;
    this.cordonedByHand.add(node);
    this.log(`a person cordons ${node}`);
  }

  override apply(a: Action): boolean {
    if (isHostAction(a)) {
      const changed = this.hosts.apply(a);
      if (changed) this.log(`${a.kind} on ${a.node}`);
      return changed;
    }
    // A reboot pod is the hosts' own; the rest of the pods are the World's.
    if ((a.kind === 'evict' || a.kind === 'deletePod') && this.hosts.rebootPods.has(a.pod))
      return this.hosts.rebootPods.delete(a.pod);
    return super.apply(a);
  }

  override observe(): ObservedState {
    const o = super.observe();
    const pods = [...o.pods, ...this.hosts.podsObserved()].sort((a, b) =>
      `${a.namespace}/${a.name}` < `${b.namespace}/${b.name}` ? -1 : 1,
    );
    return {
      ...o,
      nodes: o.nodes.map((n) => ({
        ...n,
        ready: n.ready && this.hosts.isUp(n.name),
        readySince: new Date(Math.max(Date.parse(n.readySince ?? ''), this.hosts.upSince(n.name))).toISOString(),
        bootID: this.hosts.bootID(n.name),
      })),
      jobs: this.hosts.jobsObserved(),
      pods,
    };
  }
}
