/**
 * A Bottlerocket node's API on a Unix socket, for the update script's contract test: the
 * endpoints and the update state machine as Bottlerocket's sources define them (apiserver's
 * routes and error codes, thar-be-updates' states and most_recent_command, apiclient's set and
 * update modules), recording every call.
 *
 *   PATCH /settings?tx=T      {"updates":{"version-lock":"v1.20.3"}}: 204; 400 unless the body is
 *                             application/json and the lock is latest or a version
 *   POST  /tx/commit_and_apply?tx=T   200 with the committed keys; 422 "Tried to commit with no
 *                             pending changes". The lock then reaches the update dispatcher's
 *                             configuration in the background (thar-be-settings --daemon):
 *                             `lockLagRefreshes` refreshes still choose with the one before.
 *   GET   /settings?keys=settings.updates.version-lock   {"updates":{"version-lock":...}}
 *   POST  /actions/{refresh,prepare,activate,deactivate}-update (refresh-updates): checked as
 *         thar-be-updates checks before it forks (423 "Update lock held"; 409 "Update action not
 *         allowed according to update state"; 404 "Previously chosen Update no longer exists"
 *         or "No update image applied to staging partition"), then 204 at once while the
 *         command holds the update lock for `commandMs`; its result lands in the status file.
 *   GET   /updates/status      423 while a command runs; 404 "Update status is uninitialized,
 *                             refresh-updates to initialize it" before the first command; else
 *                             the status, compact JSON as the API answers (`pretty`: as the
 *                             status file is written).
 *   POST  /actions/reboot      204; 500 "Failed to reboot, exit code: 1, stderr: ..."
 *
 * The state machine: refresh in Idle or Available goes to Available with a chosen update, else
 * Idle; in Staged or Ready it keeps the state. chosen_update: for latest the newest update above
 * the running version (the manifest's max_version is not modelled), for vX.Y.Z exactly that
 * update, null when it is the running version or not listed. prepare (Available, Staged) →
 * Staged with the chosen image in staging_partition; activate (Staged) → Ready, staging next to
 * boot; deactivate (Ready) → Staged. A failed command leaves the state, and records
 * cmd_status Failed with exit_status 1 and updog's stderr.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import semver from 'semver';

export type UpdateState = 'Idle' | 'Available' | 'Staged' | 'Ready';
export type UpdateCommand = 'refresh' | 'prepare' | 'activate' | 'deactivate';

export interface UpdateImage {
  readonly arch: string;
  readonly version: string;
  readonly variant: string;
}

export interface StagedImage {
  readonly image: UpdateImage;
  next_to_boot: boolean;
}

export interface CommandResult {
  readonly cmd_type: UpdateCommand;
  readonly cmd_status: 'Success' | 'Failed';
  readonly timestamp: string;
  readonly exit_status: number;
  readonly stderr: string;
}

/** The fields and their order as thar-be-updates serialises its UpdateStatus. */
export interface UpdateStatus {
  update_state: UpdateState;
  available_updates: string[];
  chosen_update: UpdateImage | null;
  active_partition: StagedImage | null;
  staging_partition: StagedImage | null;
  most_recent_command: CommandResult | null;
}

export interface BottlerocketApiOptions {
  readonly socketPath: string;
  /** The version booted (active_partition). */
  readonly running: string;
  /** The versions the update repository lists. */
  readonly updates: readonly string[];
  /** settings.updates.version-lock as the node has it; Bottlerocket's default is latest. */
  readonly versionLock?: string;
  /** How long a command holds the update lock after its 204. */
  readonly commandMs?: number;
  /** Refreshes after a commit that still read the lock before it (Infinity: it never arrives). */
  readonly lockLagRefreshes?: number;
  /** updog's stderr, for a command that fails. */
  readonly fail?: Partial<Record<UpdateCommand, string>>;
  /** systemctl's stderr, for a reboot refused. */
  readonly rebootFails?: string;
  /** The host goes down before it answers the reboot: the connection closes without a reply. */
  readonly rebootDropsConnection?: boolean;
  /** An answer in place of the endpoint's, e.g. a 500 of the update dispatcher. */
  readonly override?: {
    readonly method: string;
    readonly path: string;
    readonly status: number;
    readonly body: string;
  };
  /** Answer JSON pretty-printed. */
  readonly pretty?: boolean;
}

export interface ApiCall {
  readonly method: string;
  /** Path and query. */
  readonly path: string;
  readonly body?: unknown;
  readonly status: number;
  /** For a status read answered 200: the state and the last command it showed. */
  readonly shown?: { readonly state: UpdateState; readonly command?: UpdateCommand };
}

export interface FakeBottlerocketApi {
  readonly calls: ApiCall[];
  /** The status file; undefined before the first command. */
  status(): UpdateStatus | undefined;
  /** The live settings.updates.version-lock. */
  versionLock(): string;
  rebooted(): boolean;
  /** Runs a command as a POST would, unrecorded, and resolves once it finished (test set-up); `ms`: how long it runs. */
  command(cmd: UpdateCommand, ms?: number): Promise<number>;
  close(): Promise<void>;
}

const ARCH = 'x86_64';
const VARIANT = 'aws-k8s-1.29';
const LOCK_KEY = 'settings.updates.version-lock';
const FRIENDLY_VERSION = /^(latest|v?\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.+-]*)?)$/;

interface Answer {
  readonly status: number;
  readonly body?: unknown;
}

/** Which command runs in which state (thar-be-updates' drive_state_machine). */
function allowed(cmd: UpdateCommand, state: UpdateState): boolean {
  switch (cmd) {
    case 'refresh':
      return true;
    case 'prepare':
      return state === 'Available' || state === 'Staged';
    case 'activate':
      return state === 'Staged';
    case 'deactivate':
      return state === 'Ready';
  }
}

const image = (version: string): UpdateImage => ({ arch: ARCH, version, variant: VARIANT });

class UpdateApi {
  statusFile: UpdateStatus | undefined;
  live: string;
  /** The lock the dispatcher reads, and how many more refreshes read it before `live`. */
  private dispatcherLock: string;
  private lagLeft = 0;
  private pending = new Map<string, string>();
  private busy = false;
  private clock = 0;
  rebooted = false;

  constructor(private readonly o: BottlerocketApiOptions) {
    this.live = o.versionLock ?? 'latest';
    this.dispatcherLock = this.live;
  }

  setLock(tx: string, body: unknown, contentType: string | undefined): Answer {
    if (contentType !== 'application/json') return { status: 400, body: 'Content type error' };
    const lock = (body as { updates?: { 'version-lock'?: unknown } } | undefined)?.updates?.['version-lock'];
    if (typeof lock !== 'string' || !FRIENDLY_VERSION.test(lock))
      return { status: 400, body: `Unable to deserialize input JSON into model: invalid version-lock ${String(lock)}` };
    this.pending.set(tx, lock);
    return { status: 204 };
  }

  commit(tx: string): Answer {
    const lock = this.pending.get(tx);
    if (lock === undefined) return { status: 422, body: 'Tried to commit with no pending changes' };
    this.pending.delete(tx);
    if (this.lagLeft === 0) this.dispatcherLock = this.live;
    this.live = lock;
    this.lagLeft = this.o.lockLagRefreshes ?? 0;
    return { status: 200, body: [LOCK_KEY] };
  }

  readStatus(): Answer {
    if (this.busy) return { status: 423, body: 'Unable to obtain shared lock for reading update status: busy' };
    if (this.statusFile === undefined)
      return { status: 404, body: 'Update status is uninitialized, refresh-updates to initialize it' };
    return { status: 200, body: this.statusFile };
  }

  /** The checks thar-be-updates makes before it forks; the command then runs for commandMs. */
  start(cmd: UpdateCommand, ms = this.o.commandMs ?? 30): { answer: Answer; done?: Promise<void> } {
    if (this.busy) return { answer: { status: 423, body: 'Update lock held' } };
    this.statusFile ??= {
      update_state: 'Idle',
      available_updates: [],
      chosen_update: null,
      active_partition: { image: image(this.o.running), next_to_boot: true },
      staging_partition: null,
      most_recent_command: null,
    };
    const s = this.statusFile;
    if (!allowed(cmd, s.update_state))
      return { answer: { status: 409, body: 'Update action not allowed according to update state' } };
    if (cmd === 'prepare' && s.chosen_update === null)
      return { answer: { status: 404, body: 'Previously chosen Update no longer exists' } };
    if ((cmd === 'activate' || cmd === 'deactivate') && s.staging_partition === null)
      return { answer: { status: 404, body: 'No update image applied to staging partition' } };
    this.busy = true;
    const done = new Promise<void>((resolve) =>
      setTimeout(() => {
        this.finish(cmd, s);
        this.busy = false;
        resolve();
      }, ms),
    );
    return { answer: { status: 204 }, done };
  }

  private finish(cmd: UpdateCommand, s: UpdateStatus): void {
    const stderr = this.o.fail?.[cmd];
    this.clock += 1;
    s.most_recent_command = {
      cmd_type: cmd,
      cmd_status: stderr === undefined ? 'Success' : 'Failed',
      timestamp: new Date(Date.UTC(2024, 9, 24, 10, 0, this.clock)).toISOString(),
      exit_status: stderr === undefined ? 0 : 1,
      stderr: stderr ?? '',
    };
    if (stderr !== undefined) {
      // updog whats failing makes refresh report no update: Idle, from Idle or Available.
      if (cmd === 'refresh' && s.update_state === 'Available') s.update_state = 'Idle';
      return;
    }
    this.succeed(cmd, s);
  }

  private succeed(cmd: UpdateCommand, s: UpdateStatus): void {
    switch (cmd) {
      case 'refresh': {
        s.available_updates = [...this.o.updates].sort(semver.rcompare);
        s.chosen_update = this.choose();
        if (s.update_state === 'Idle' || s.update_state === 'Available')
          s.update_state = s.chosen_update === null ? 'Idle' : 'Available';
        return;
      }
      case 'prepare':
        s.staging_partition = { image: s.chosen_update ?? image('?'), next_to_boot: false };
        s.update_state = 'Staged';
        return;
      case 'activate':
      case 'deactivate': {
        const activate = cmd === 'activate';
        if (s.staging_partition) s.staging_partition.next_to_boot = activate;
        if (s.active_partition) s.active_partition.next_to_boot = !activate;
        s.update_state = activate ? 'Ready' : 'Staged';
        return;
      }
    }
  }

  /** update_available_updates: the lock the dispatcher's configuration holds picks the update. */
  private choose(): UpdateImage | null {
    const lock = this.lagLeft > 0 ? this.dispatcherLock : this.live;
    if (this.lagLeft > 0) this.lagLeft -= 1;
    else this.dispatcherLock = this.live;
    const sorted = [...this.o.updates].sort(semver.rcompare);
    if (lock === 'latest') {
      const newest = sorted.find((v) => semver.gt(v, this.o.running));
      return newest === undefined ? null : image(newest);
    }
    const pinned = lock.replace(/^v/, '');
    if (pinned === this.o.running || !sorted.includes(pinned)) return null;
    return image(pinned);
  }
}

function readBody(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      if (text === '') return resolve(undefined);
      try {
        resolve(JSON.parse(text));
      } catch {
        resolve(text);
      }
    });
  });
}

const ACTIONS: Record<string, UpdateCommand> = {
  '/actions/refresh-updates': 'refresh',
  '/actions/prepare-update': 'prepare',
  '/actions/activate-update': 'activate',
  '/actions/deactivate-update': 'deactivate',
};

function route(api: UpdateApi, o: BottlerocketApiOptions, req: IncomingMessage, body: unknown): Answer | 'drop' {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const tx = url.searchParams.get('tx') ?? 'default';
  const where = `${req.method ?? ''} ${url.pathname}`;
  if (o.override && o.override.method === req.method && o.override.path === url.pathname)
    return { status: o.override.status, body: o.override.body };
  const cmd = ACTIONS[url.pathname];
  if (req.method === 'POST' && cmd !== undefined) return api.start(cmd).answer;
  switch (where) {
    case 'GET /settings':
      return { status: 200, body: { updates: { 'version-lock': api.live } } };
    case 'PATCH /settings':
      return api.setLock(tx, body, req.headers['content-type']);
    case 'POST /tx/commit_and_apply':
      return api.commit(tx);
    case 'GET /updates/status':
      return api.readStatus();
    case 'POST /actions/reboot':
      if (o.rebootDropsConnection) return 'drop';
      if (o.rebootFails !== undefined)
        return { status: 500, body: `Failed to reboot, exit code: 1, stderr: ${o.rebootFails}` };
      api.rebooted = true;
      return { status: 204 };
    default:
      return { status: 404 };
  }
}

function send(res: ServerResponse, a: Answer, pretty: boolean): void {
  if (a.body === undefined) {
    res.writeHead(a.status).end();
  } else if (typeof a.body === 'string') {
    res.writeHead(a.status, { 'content-type': 'text/plain' }).end(a.body);
  } else {
    res
      .writeHead(a.status, { 'content-type': 'application/json' })
      .end(pretty ? JSON.stringify(a.body, null, 2) : JSON.stringify(a.body));
  }
}

export async function startBottlerocketApi(o: BottlerocketApiOptions): Promise<FakeBottlerocketApi> {
  const api = new UpdateApi(o);
  const calls: ApiCall[] = [];
  const server: Server = createServer((req, res) => {
    void readBody(req).then((body) => {
      const answer = route(api, o, req, body);
      const call = { method: req.method ?? '', path: req.url ?? '', ...(body !== undefined ? { body } : {}) };
      if (answer === 'drop') {
        calls.push({ ...call, status: 0 });
        req.socket.destroy();
        return;
      }
      const shown =
        answer.status === 200 && call.path === '/updates/status' && api.statusFile
          ? {
              state: api.statusFile.update_state,
              ...(api.statusFile.most_recent_command ? { command: api.statusFile.most_recent_command.cmd_type } : {}),
            }
          : undefined;
      calls.push({ ...call, status: answer.status, ...(shown ? { shown } : {}) });
      send(res, answer, o.pretty === true);
    });
  });
  await new Promise<void>((resolve) => server.listen(o.socketPath, resolve));
  return {
    calls,
    status: () => (api.statusFile === undefined ? undefined : structuredClone(api.statusFile)),
    versionLock: () => api.live,
    rebooted: () => api.rebooted,
    command: async (cmd, ms) => {
      const { answer, done } = api.start(cmd, ms);
      await done;
      return answer.status;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
