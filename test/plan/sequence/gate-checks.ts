/**
 * The gates of a mixed run (mixed.ts), judged from the world and from what the person merged,
 * never from the planner's gate code: a spec starts no node while it waits for a person (its
 * approval not merged, or only wrong ones), outside its window (window-check.ts), or, past its
 * canary node, before that node's soak ended as the world saw it (the replacement joined and
 * was Ready, or the host came back from its reboot, soakSeconds before).
 */
import type { Action } from '../../../src/plan/index.js';
import { ANNOTATIONS } from '../../../src/protocol/keys.js';
import type { ApprovalRequirement, MaintenanceWindow } from '../../../src/spec/model.js';
import type { OpsWorld } from './ops-world.js';
import { windowOpenAt } from './window-check.js';

/** One spec's gates in a mixed run. */
export interface Gates {
  /** A one-node canary wave soaking this many seconds; undefined: no canary. */
  readonly canary?: number;
  readonly required: ApprovalRequirement;
  /** Seconds into the run at which the person merges the right approval (when one is required). */
  readonly approvalAt: number;
  /** Wrong approvals the person merges first: another stage, image or revision, or target. */
  readonly wrong: readonly { readonly how: 'stage' | 'version' | 'target'; readonly at: number }[];
  readonly window?: MaintenanceWindow;
}

/** A spec's starts as the world saw them: the canary node, when it started, and later nodes. */
interface Starts {
  canary?: { readonly node: string; readonly at: number };
  readonly later: Set<string>;
}

export class GateChecks {
  /** Per spec: rounds it waited for an approval, for its window; later starts it made. */
  readonly waited = { approval: 0, window: 0 };
  /** Steps at which the NodeOp had the NodeImage's canary replacement while the image waited for afterCanary. */
  canaryTakenWhileWaiting = 0;
  private readonly starts = {
    image: { later: new Set<string>() } as Starts,
    op: { later: new Set<string>() } as Starts,
  };

  constructor(
    private readonly world: OpsWorld,
    private readonly gates: { readonly image: Gates; readonly op: Gates },
    /** Whether the right approval for a spec's required stage is in Git now: the person's record of it. */
    private readonly approved: (kind: 'image' | 'op') => boolean,
    private readonly violation: (key: string, text: string) => void,
  ) {}

  /** Before an action is applied: a start of a gated spec's node must find every gate open in the world. */
  action(a: Action, now: number): void {
    if (a.kind !== 'annotateNode' || a.annotations[ANNOTATIONS.phase] !== 'Pending') return;
    const kind = a.spec.kind === 'NodeImage' ? 'image' : a.spec.kind === 'NodeOp' ? 'op' : undefined;
    if (kind === undefined) return;
    const g = this.gates[kind];
    const who = `${a.spec.kind}/${a.spec.name}`;
    const when = new Date(now).toISOString();
    if (g.window !== undefined && !windowOpenAt(g.window, now))
      this.violation(`window ${a.node}`, `${who} starts ${a.node} at ${when}, outside window ${g.window.name}`);
    if (g.required === 'start' && !this.approved(kind))
      this.violation(`approval ${kind}`, `${who} starts ${a.node} before its start approval was merged`);
    const s = this.starts[kind];
    if (g.canary === undefined) return;
    if (s.canary === undefined || (s.canary.node === a.node && s.later.size === 0) || this.canaryLost(kind)) {
      s.canary = { node: a.node, at: now };
      return;
    }
    if (s.later.has(a.node)) return;
    s.later.add(a.node);
    if (g.required === 'afterCanary' && !this.approved(kind))
      this.violation(
        `after-canary ${kind}`,
        `${who} starts ${a.node} past its canary ${s.canary.node} before the afterCanary approval was merged`,
      );
    // The first start past the canary is the one the soak holds back; once passed, it stays passed.
    if (s.later.size > 1) return;
    const soakEnd = this.soakEnd(kind, s.canary);
    if (soakEnd === undefined || now < soakEnd)
      this.violation(
        `soak ${kind}`,
        `${who} starts ${a.node} at ${when}, before its canary ${s.canary.node} soaked ${g.canary}s` +
          (soakEnd === undefined ? ' (it never came back)' : ` (until ${new Date(soakEnd).toISOString()})`),
      );
  }

  /**
   * A NodeOp's canary node replaced by the NodeImage before a second node started: the world
   * took the canary (and its record) away, and the NodeOp's next start is a canary again.
   */
  private canaryLost(kind: 'image' | 'op'): boolean {
    const c = this.starts[kind].canary;
    if (kind !== 'op' || c === undefined || this.starts.op.later.size > 0) return false;
    return !this.world.nodes.has(c.node);
  }

  /**
   * When the canary's soak ends as the world shows it. The image's canary: the first node that
   * joined after the canary started (the canary wave is alone, so it is the replacement), Ready
   * since it joined. The NodeOp's: the host back from its reboot.
   */
  private soakEnd(kind: 'image' | 'op', c: { node: string; at: number }): number | undefined {
    const soak = (this.gates[kind].canary ?? 0) * 1000;
    if (kind === 'op') {
      if ((this.world.hosts.reboots.get(c.node) ?? 0) === 0 || !this.world.nodes.has(c.node)) return undefined;
      return this.world.hosts.upSince(c.node) + soak;
    }
    const joined = [...this.world.nodes.values()].filter((n) => n.createdAt > c.at).map((n) => n.readySince);
    return joined.length === 0 ? undefined : Math.min(...joined) + soak;
  }

  /** After each action: whether the NodeOp has the image's canary replacement while the image waits for a person. */
  step(): void {
    const c = this.starts.image.canary;
    const g = this.gates.image;
    if (c === undefined || g.required !== 'afterCanary' || this.approved('image')) return;
    for (const n of this.world.nodes.values())
      if (n.createdAt > c.at && this.world.hosts.busy(n.name) !== undefined) {
        this.canaryTakenWhileWaiting++;
        return;
      }
  }

  /** A round's waits: how often a spec waited for a person or a window (the run must show both). */
  waits(codes: readonly string[]): void {
    if (codes.includes('approval')) this.waited.approval++;
    if (codes.includes('window')) this.waited.window++;
  }
}
