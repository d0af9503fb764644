/**
 * Notifications under kills, checked from outside: a local webhook receiver records what
 * arrives, and the status branch says what should have. The events a status implies are
 * restated here from docs/guides/notifications.md, not taken from drydock's code: a rollout
 * started once a node of it shows a phase past Outdated, a node failed, the rollout halted, a
 * rollout complete (only when its start was news). What the branch showed before the receivers
 * were turned on is history: no message for it.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parse, stringify } from 'yaml';
import { startReceiver, type Receiver } from '../../notify/receiver.js';
import { tempDir } from '../world.js';

/** Planted in the receiver's address and the signing key: neither may appear in a message. */
export const NOTIFY_CANARIES = { token: 'XOXB-crash-canary-5e0b7d', key: 'hmac-crash-canary-c3a9f1' } as const;
const KEY_ENV = 'DRYDOCK_NOTIFY_KEY';

/** Node phases in which the rollout acted on the node. */
const ACTED = new Set(['Cordoned', 'Draining', 'Updating', 'Rebooting', 'Verifying', 'Done', 'Skipped', 'Failed']);

interface StatusDoc {
  readonly kind?: string;
  readonly name?: string;
  readonly revision?: string;
  readonly phase?: string;
  readonly progress?: { readonly total?: number };
  readonly nodes?: readonly { readonly node?: string; readonly phase?: string }[];
}

interface Message {
  readonly event: string;
  readonly spec: { readonly kind: string; readonly name: string };
  readonly revision: string;
  readonly node?: string;
  readonly status: { readonly commit?: string };
}

/** The facts one spec's status file shows, as `Kind/name@revision event [node]`. */
function docFacts(d: StatusDoc): string[] {
  const id = `${d.kind ?? ''}/${d.name ?? ''}@${d.revision ?? ''}`;
  const nodes = d.nodes ?? [];
  const out: string[] = [];
  if (nodes.some((n) => ACTED.has(n.phase ?? ''))) out.push(`${id} started`);
  for (const n of nodes) if (n.phase === 'Failed') out.push(`${id} nodeFailed ${n.node ?? ''}`);
  if (d.phase === 'Halted') out.push(`${id} halted`);
  if (d.phase === 'Complete' && (d.progress?.total ?? 0) > 0) out.push(`${id} complete`);
  return out;
}

function messageFact(m: Message): string {
  return `${m.spec.kind}/${m.spec.name}@${m.revision} ${m.event}${m.node !== undefined ? ` ${m.node}` : ''}`;
}

export interface NotifyCheck {
  /** Events the status branch implies that no message brought. */
  readonly missing: string[];
  /** Messages for what the status branch never showed, or showed before the receivers were on. */
  readonly unexplained: string[];
  /** Messages whose linked status commit does not show their event. */
  readonly unlinked: string[];
  /** Messages with a canary secret in them. */
  readonly leaked: number;
  /** Messages received, duplicates included. */
  readonly messages: number;
}

export class NotifyWatch {
  private constructor(
    readonly receiver: Receiver,
    /** `drydock run` flags and environment for the receiver's secrets. */
    readonly args: readonly string[],
    readonly env: NodeJS.ProcessEnv,
    readonly dir: string,
    private readonly bare: string,
    /** The status branch's tip before the receivers were turned on. */
    private readonly before: string | undefined,
  ) {}

  static async start(bare: string): Promise<NotifyWatch> {
    const receiver = await startReceiver();
    const dir = tempDir('drydock-rel-notify-');
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'crash-url'), `${receiver.url}/hook/${NOTIFY_CANARIES.token}\n`);
    const before = git(bare, 'rev-parse', '--verify', '--quiet', 'drydock/status').trim() || undefined;
    return new NotifyWatch(
      receiver,
      ['--notify-secrets-dir', dir],
      { [KEY_ENV]: NOTIFY_CANARIES.key },
      dir,
      bare,
      before,
    );
  }

  /** drydock.yaml `base` with the receiver added, every event wanted. */
  config(base: string): string {
    const doc = parse(base) as Record<string, unknown>;
    return stringify({
      ...doc,
      notifications: {
        receivers: [
          {
            name: 'crash',
            type: 'webhook',
            urlFrom: { file: 'crash-url' },
            secretFrom: { env: KEY_ENV },
            events: ['started', 'approval', 'nodeFailed', 'halted', 'complete'],
          },
        ],
      },
    });
  }

  /** Whether a message of `event` for `spec` (`Kind/name`, any revision) arrived. */
  received(spec: string, event: string): boolean {
    return this.messages().some((m) => `${m.spec.kind}/${m.spec.name}` === spec && m.event === event);
  }

  private messages(): Message[] {
    return this.receiver.accepted().map((b) => JSON.parse(b) as Message);
  }

  /** The facts the status branch showed at `commit`. */
  private factsAt(commit: string): Set<string> {
    const files = git(this.bare, 'ls-tree', '-r', '--name-only', commit, 'status/')
      .split('\n')
      .filter((f) => /^status\/[^/]+\/[^/]+\.yaml$/.test(f));
    const out = new Set<string>();
    for (const f of files)
      for (const fact of docFacts(parse(git(this.bare, 'show', `${commit}:${f}`)) as StatusDoc)) out.add(fact);
    return out;
  }

  check(): NotifyCheck {
    const history = this.before !== undefined ? this.factsAt(this.before) : new Set<string>();
    const range = this.before !== undefined ? `${this.before}..drydock/status` : 'drydock/status';
    const commits = git(this.bare, 'rev-list', range)
      .split('\n')
      .filter((c) => c !== '');
    const at = new Map(commits.map((c) => [c, this.factsAt(c)]));
    const shown = new Set([...at.values()].flatMap((s) => [...s]));
    const news = (f: string): boolean => shown.has(f) && !history.has(f);
    // A completion is news only with its start: a spec nothing had to touch completes silently.
    const implied = [...shown].filter(
      (f) => news(f) && (!f.endsWith(' complete') || news(f.replace(/ complete$/, ' started'))),
    );
    const ms = this.messages();
    const got = new Set(ms.map(messageFact));
    // The address's path carries the token by design (as Slack's does); the bodies must not.
    const bodies = this.receiver.received.map((r) => r.body).join('\n');
    return {
      missing: implied.filter((f) => !got.has(f)).sort(),
      unexplained: [...got].filter((f) => !implied.includes(f)).sort(),
      unlinked: ms.filter((m) => !(at.get(m.status.commit ?? '')?.has(messageFact(m)) ?? false)).map(messageFact),
      leaked: [NOTIFY_CANARIES.token, NOTIFY_CANARIES.key].filter((c) => bodies.includes(c)).length,
      messages: ms.length,
    };
  }

  close(): Promise<void> {
    return this.receiver.close();
  }
}

function git(bare: string, ...args: string[]): string {
  try {
    return execFileSync('git', ['--git-dir', bare, ...args], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  } catch (err) {
    // rev-parse --verify --quiet of a branch not written yet
    if (args[0] === 'rev-parse') return '';
    throw err;
  }
}
