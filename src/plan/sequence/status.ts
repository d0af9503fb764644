/**
 * What every kind's status says the same way: the conditions of a spec (Ready, Progressing,
 * Stalled) and which wait a node's row shows. A spec is Stalled when nothing changes by
 * itself: it is halted, or it waits for an approval or for a node another operation holds.
 */
import type { Condition, SpecPhase, Wait } from '../types.js';

/** Wait codes that need a person: nothing changes by itself. */
const STALLING = new Set<Wait['code']>(['approval', 'halted', 'lock', 'paused']);

/** Each node's first wait, in words: what its row says it waits for. */
export function waitByNode(waits: readonly Wait[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const w of waits) if (w.node !== undefined && !out.has(w.node)) out.set(w.node, w.reason);
  return out;
}

/**
 * The spec's conditions. `message` is what it is doing or waiting for; `halt` why it is halted,
 * when it is (it says more than any wait).
 */
export function specConditions(phase: SpecPhase, message: string, waits: readonly Wait[], halt?: string): Condition[] {
  const stalling = waits.find((w) => STALLING.has(w.code));
  const stalled = phase === 'Halted' || stalling !== undefined;
  return [
    { type: 'Ready', status: phase === 'Complete' ? 'True' : 'False', reason: phase, message },
    { type: 'Progressing', status: phase === 'Progressing' ? 'True' : 'False', reason: phase, message },
    {
      type: 'Stalled',
      status: stalled ? 'True' : 'False',
      reason: stalled ? (phase === 'Halted' ? 'Halted' : (stalling?.code ?? 'Stalled')) : 'NotStalled',
      message: stalled ? (halt ?? stalling?.reason ?? message) : '',
    },
  ];
}
