/**
 * A one-shot NodeOp (followNewNodes false: the Kairos operator's NodeOp, "run once for that
 * object") runs on the nodes it selected when its revision was first seen, never on a node its
 * selector matches later (a replacement of an image rollout, a node that joined). drydock keeps
 * nothing in memory, so that set lives on the nodes: each selected node carries
 * `selection.nodeop.drydock.dev/<name>` = "<revision> <first seen>", " later" appended where the
 * node came after. Every selected node carries it, the late ones too, so the time survives the
 * nodes it ran on being replaced; a node not marked yet (drydock stopped between two marks)
 * belongs to the set when it existed at that time.
 */
import type { ObservedNode } from '../../observe/types.js';
import { nodeOpSelectionKey } from '../../protocol/keys.js';
import type { NodeOp } from '../../spec/model.js';
import type { PlanBuilder } from '../builder.js';
import type { SpecRef } from '../types.js';

const LATER = 'later';

interface Mark {
  readonly revision: string;
  readonly firstSeen: string;
  readonly later: boolean;
}

function readMark(node: ObservedNode, key: string): Mark | undefined {
  const parts = (node.annotations[key] ?? '').split(' ');
  const [revision, firstSeen, tail] = parts;
  if (revision === undefined || firstSeen === undefined || !Number.isFinite(Date.parse(firstSeen))) return undefined;
  if (parts.length > 3 || (tail !== undefined && tail !== LATER)) return undefined;
  return { revision, firstSeen, later: tail === LATER };
}

/** The selection of a one-shot NodeOp this round. */
export interface OneShotSelection {
  /** When this revision first selected its nodes (now, the first time). */
  readonly firstSeen: string;
  /** Selected nodes that run it: those it selected when first seen. */
  readonly members: readonly ObservedNode[];
  /** Selected nodes that came later, which it leaves alone. */
  readonly latecomers: readonly ObservedNode[];
  /** The annotations to write on selected nodes that do not carry their mark yet. */
  readonly marks: readonly { readonly node: string; readonly value: string }[];
}

/**
 * Splits the selected nodes into members and latecomers. `ranHere` says a node is held or done by
 * this revision: such a node is a member whatever its mark says (it ran there already).
 */
export function oneShotSelection(
  op: Pick<NodeOp, 'name' | 'revision'>,
  all: readonly ObservedNode[],
  selected: readonly ObservedNode[],
  now: number,
  ranHere: (n: ObservedNode) => boolean,
): OneShotSelection {
  const key = nodeOpSelectionKey(op.name);
  // The earliest recorded time of this revision, on any node (a selected one or not any more).
  const recorded = all
    .map((n) => readMark(n, key))
    .filter((m): m is Mark => m?.revision === op.revision)
    .map((m) => m.firstSeen)
    .sort((a, b) => Date.parse(a) - Date.parse(b))[0];
  const firstSeen = recorded ?? new Date(now).toISOString();
  const members: ObservedNode[] = [];
  const latecomers: ObservedNode[] = [];
  const marks: { node: string; value: string }[] = [];
  for (const n of selected) {
    const mark = readMark(n, key);
    const own = mark?.revision === op.revision ? mark : undefined;
    const member =
      ranHere(n) ||
      (own !== undefined ? !own.later : recorded === undefined || Date.parse(n.createdAt) <= Date.parse(firstSeen));
    (member ? members : latecomers).push(n);
    const value = member ? `${op.revision} ${firstSeen}` : `${op.revision} ${firstSeen} ${LATER}`;
    if (own === undefined || own.later === member) marks.push({ node: n.name, value });
  }
  return { firstSeen, members, latecomers, marks };
}

/** Writes the marks: bookkeeping, after the round's status was read, so it never reads as progress. */
export function writeSelectionMarks(
  b: PlanBuilder,
  spec: SpecRef,
  op: Pick<NodeOp, 'name'>,
  s: OneShotSelection,
): void {
  const key = nodeOpSelectionKey(op.name);
  for (const m of s.marks) {
    const late = m.value.endsWith(` ${LATER}`);
    b.act({
      kind: 'annotateNode',
      spec,
      node: m.node,
      annotations: { [key]: m.value },
      reason: late
        ? `${spec.kind} ${spec.name} records that node ${m.node} came after it first selected its nodes (${s.firstSeen}); it runs once, on those`
        : `${spec.kind} ${spec.name} records that it selected node ${m.node} when first seen (${s.firstSeen})`,
    });
  }
}

/** What the status says of the latecomers: why a node its selector matches does not run it. */
export function latecomersText(spec: SpecRef, s: OneShotSelection): string | undefined {
  if (s.latecomers.length === 0) return undefined;
  const names = s.latecomers.map((n) => n.name).join(', ');
  return `${spec.kind} ${spec.name} runs once, on the nodes it selected when first seen (${s.firstSeen}); ${names} came later and ${s.latecomers.length === 1 ? 'does' : 'do'} not run it (write it as drydock.dev/v1alpha1 with followNewNodes: true to run on new nodes too)`;
}
