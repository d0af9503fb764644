/**
 * A simulated host that plays Bottlerocket (pure, used by decide.ts). A KWOK node runs no
 * container, so the host decides how drydock's Bottlerocket update Job
 * (src/execute/jobs/bottlerocket-update.ts) ends, as its script (assets/bottlerocket-update.sh)
 * would end on a Bottlerocket host with that update repository, following Bottlerocket's
 * documented update behaviour:
 * - refresh-updates chooses with the version lock the script sets: `latest` is the newest update
 *   above the running version, a pinned version is that update, or none when it is the running
 *   version or not in the repository;
 * - prepare-update writes the chosen update to the staging partition, activate-update marks it
 *   next to boot, and a reboot boots it: the node then reports it in status.nodeInfo.osImage;
 * - a retried Job finds the update it activated before and reports it again; an update activated
 *   for another version is deactivated first.
 * The Job's termination message is the script's own: `staged X (was Y)` (`, reboot requested`),
 * `already at X`, `<step> failed: <the API's words>` or `invalid input: ...`.
 *
 * What a real host keeps on disk (the partition next to boot) the simulated host keeps on its
 * Node (BOTTLEROCKET_KEYS), so a restarted simulator finds it where it was.
 */
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import type { SimBottlerocketConfig, SimBottlerocketFault } from '../cloud/sim/config.js';
import { bottlerocketOsImage } from '../cloud/sim/nodes.js';
import { BOTTLEROCKET_API_SOCKET, BOTTLEROCKET_UPDATE_ENV } from '../execute/jobs/bottlerocket-update.js';

/** Node annotations of a Bottlerocket host's state, which a real host keeps on disk. */
export const BOTTLEROCKET_KEYS = {
  /** The version activated on the staging partition: the next reboot boots it. */
  staged: 'sim.drydock.dev/bottlerocket-staged',
  /** The uid of the update Job's pod that asked the API for a reboot not yet done. */
  rebootRequestedBy: 'sim.drydock.dev/bottlerocket-reboot-requested-by',
} as const;

/** The default stderr of a prepare-update that fails (updog's words for a full disk). */
export const PREPARE_FAILS_STDERR = 'Failed to write image to the inactive partition: No space left on device';

const OS_IMAGE = /^Bottlerocket OS (\S+) \((.+)\)$/;
const VERSION = /^[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.+-]*)?$/;

/** The version an osImage names; undefined when it is not Bottlerocket's. */
export function osImageVersion(osImage: string | undefined): string | undefined {
  return OS_IMAGE.exec(osImage ?? '')?.[1];
}

/** Orders X.Y.Z versions by number; a pre-release comes before its release. */
export function compareVersions(a: string, b: string): number {
  const parse = (v: string): [number[], string] => {
    const m = /^(\d+)\.(\d+)\.(\d+)(?:-([^+]*))?/.exec(v);
    return m ? [[Number(m[1]), Number(m[2]), Number(m[3])], m[4] ?? ''] : [[0, 0, 0], v];
  };
  const [na, pa] = parse(a);
  const [nb, pb] = parse(b);
  for (let i = 0; i < 3; i++) if ((na[i] ?? 0) !== (nb[i] ?? 0)) return (na[i] ?? 0) - (nb[i] ?? 0);
  if (pa === pb) return 0;
  if (pa === '') return 1;
  if (pb === '') return -1;
  return pa < pb ? -1 : 1;
}

/** The script's inputs, when the pod is a Bottlerocket update Job's. */
export function bottlerocketUpdateEnv(pod: V1Pod): { version: string; reboot: string } | undefined {
  for (const c of pod.spec?.containers ?? []) {
    const env = new Map((c.env ?? []).map((e) => [e.name, e.value ?? '']));
    const version = env.get(BOTTLEROCKET_UPDATE_ENV.version);
    if (version !== undefined) return { version, reboot: env.get(BOTTLEROCKET_UPDATE_ENV.reboot) ?? 'false' };
  }
  return undefined;
}

/** One Bottlerocket host as the update sees it. */
export interface BottlerocketHost {
  /** The version booted (the active partition). */
  readonly running: string;
  /** The version activated to boot next, if any. */
  readonly staged?: string;
  /** The versions the update repository offers this host. */
  readonly available: readonly string[];
  /** prepare-update fails with this stderr. */
  readonly prepareFails?: string;
}

export interface BottlerocketRun {
  readonly exitCode: number;
  readonly message: string;
  /** The version next to boot once the Job ended (undefined: the running one). */
  readonly staged: string | undefined;
  /** The script asked the API to reboot. */
  readonly reboot: boolean;
}

function faultsOf(node: string, config: SimBottlerocketConfig): Set<SimBottlerocketFault['kind']> {
  return new Set(config.faults.filter((f) => f.nodes === undefined || f.nodes.includes(node)).map((f) => f.kind));
}

/** The host behind a node of a Bottlerocket group: its versions from the Node, its repository and faults from the config. */
export function bottlerocketHost(node: V1Node, config: SimBottlerocketConfig): BottlerocketHost {
  const name = node.metadata?.name ?? '';
  const faults = faultsOf(name, config);
  const staged = node.metadata?.annotations?.[BOTTLEROCKET_KEYS.staged];
  const stderr = config.faults.find(
    (f) => f.kind === 'prepareFails' && (f.nodes === undefined || f.nodes.includes(name)),
  )?.stderr;
  return {
    running: osImageVersion(node.status?.nodeInfo?.osImage) ?? config.version,
    ...(staged ? { staged } : {}),
    available: faults.has('noUpdate') ? [] : config.available,
    ...(faults.has('prepareFails') ? { prepareFails: stderr ?? PREPARE_FAILS_STDERR } : {}),
  };
}

/** The osImage the node reports after a reboot; undefined when it stays as it was. */
export function bootedOsImage(node: V1Node, config: SimBottlerocketConfig): string | undefined {
  const staged = node.metadata?.annotations?.[BOTTLEROCKET_KEYS.staged];
  if (!staged || faultsOf(node.metadata?.name ?? '', config).has('bootsOldVersion')) return undefined;
  return bottlerocketOsImage(staged, config.variant);
}

/** The script's one-line summary; a failure's long stderr keeps its head and its last words. */
function oneLine(text: string): string {
  return text
    .replace(/[\n\r\t]/g, ' ')
    .replace(/ +/g, ' ')
    .trim();
}

function failed(text: string, staged: string | undefined): BottlerocketRun {
  const line = oneLine(text);
  const message = line.length > 1000 ? `${line.slice(0, 250)} ... ${line.slice(line.length - 744)}` : line;
  return { exitCode: 1, message, staged, reboot: false };
}

/** How the update script ends on this host, with these inputs (its main, step by step). */
export function runBottlerocketUpdate(
  host: BottlerocketHost,
  env: { readonly version: string; readonly reboot: string },
): BottlerocketRun {
  const latest = env.version === 'latest';
  const target = latest ? 'latest' : env.version.replace(/^v/, '');
  const invalid = (what: string): BottlerocketRun => ({
    exitCode: 2,
    message: `invalid input: ${what}`,
    staged: host.staged,
    reboot: false,
  });
  if (!latest && !VERSION.test(target))
    return invalid(`BOTTLEROCKET_VERSION '${env.version}' is not X.Y.Z, vX.Y.Z or latest`);
  if (env.reboot !== 'true' && env.reboot !== 'false')
    return invalid(`BOTTLEROCKET_REBOOT '${env.reboot}' is not true or false`);

  // refresh-updates, with the version lock the script set.
  const { running } = host;
  const repository = [...new Set(host.available)].sort((a, b) => compareVersions(b, a));
  const chosen = latest
    ? repository.find((v) => compareVersions(v, running) > 0)
    : target !== running && repository.includes(target)
      ? target
      : undefined;
  if (!latest && chosen !== target && running !== target) {
    const state = host.staged !== undefined ? 'Ready' : 'Idle';
    const lock = `v${target}`;
    return failed(
      `refresh-updates failed: no update to ${target}: chosen_update null (update_state ${state}, available_updates [${repository.join(', ')}], running ${running}, version-lock ${lock})`,
      host.staged,
    );
  }
  if (chosen === undefined) {
    // Nothing to prepare: an update activated for another version is deactivated, so the node stays.
    return { exitCode: 0, message: `already at ${running}`, staged: undefined, reboot: false };
  }
  if (host.staged !== chosen) {
    // Another version activated is deactivated before prepare-update; a failed prepare leaves none.
    if (host.prepareFails !== undefined)
      return failed(`prepare-update failed: Failed (exit_status 1): ${host.prepareFails}`, undefined);
  }
  const reboot = env.reboot === 'true';
  return {
    exitCode: 0,
    message: `staged ${chosen} (was ${running})${reboot ? ', reboot requested' : ''}`,
    staged: chosen,
    reboot,
  };
}

/** How the script ends on a node that is not a Bottlerocket host: nothing answers on the socket. */
export function noBottlerocketApi(node: string): BottlerocketRun {
  return failed(
    `reading settings.updates.version-lock failed: no answer from ${BOTTLEROCKET_API_SOCKET}: sim host ${node} is not a Bottlerocket host (its group has no bottlerocket in the sim config)`,
    undefined,
  );
}
