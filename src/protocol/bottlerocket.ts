/**
 * What the Bottlerocket update Job (assets/bottlerocket-update.sh) says it did, in its
 * termination message: the executor builds the Job, the planner reads its outcome.
 */
export type BottlerocketUpdateResult =
  | {
      readonly outcome: 'staged';
      readonly version: string;
      readonly previous: string;
      readonly rebootRequested: boolean;
    }
  | { readonly outcome: 'current'; readonly version: string };

const STAGED = /^staged (\S+) \(was (\S+)\)(, reboot requested)?$/;
const CURRENT = /^already at (\S+)$/;

/** What a succeeded Job's termination message says the node will run; undefined for any other text. */
export function bottlerocketUpdateResult(message: string | undefined): BottlerocketUpdateResult | undefined {
  const text = message?.trim() ?? '';
  const staged = STAGED.exec(text);
  if (staged) {
    return { outcome: 'staged', version: staged[1] ?? '', previous: staged[2] ?? '', rebootRequested: !!staged[3] };
  }
  const current = CURRENT.exec(text);
  return current ? { outcome: 'current', version: current[1] ?? '' } : undefined;
}
