/**
 * What the live view shows, read the way a person could read it: the Nodes' labels and
 * drydock.dev/ annotations (kubectl get nodes), and the fleet repository's tracked branch and
 * status branch (git log, git show). The conversions are pure and tested; the reads are thin.
 */
import { CoreV1Api, type KubeConfig, type V1Node } from '@kubernetes/client-node';
import { parse as parseYaml } from 'yaml';
import { ANNOTATIONS } from '../protocol/keys.js';
import { parseLock } from '../plan/protocol.js';
import { SIM_IMAGE_ANNOTATION, SIM_LABELS } from '../cloud/sim/nodes.js';
import type { NodeRow } from '../plan/types.js';
import { readSpecStatuses, type SpecStatusRead } from '../report/status-read.js';
import { readBranch, readTree } from './fleet-repo.js';
import type { GitView, NodeView, SpecView } from './view.js';

function ready(node: V1Node): boolean {
  return node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
}

export function nodeView(node: V1Node): NodeView {
  const labels = node.metadata?.labels ?? {};
  const annotations = node.metadata?.annotations ?? {};
  const group = labels[SIM_LABELS.group];
  const image = annotations[SIM_IMAGE_ANNOTATION] ?? node.status?.nodeInfo?.osImage;
  const lock = parseLock(annotations[ANNOTATIONS.operation]);
  const replacedBy = annotations[ANNOTATIONS.replacedBy];
  // An old node whose replacement is done lingers until its instance is gone: it is no node
  // drydock finished, but one on its way out, and says by which instance it was replaced.
  const leaving = annotations[ANNOTATIONS.phase] === 'Done' && replacedBy !== undefined;
  const phase = leaving ? 'Replaced' : annotations[ANNOTATIONS.phase];
  const phaseSince = annotations[ANNOTATIONS.phaseSince];
  const reason = leaving ? `replaced by ${replacedBy}; leaves with its instance` : annotations[ANNOTATIONS.reason];
  // A Done node keeps its lock as a record; the live view shows only what holds a node now.
  const operation = lock === undefined || phase === 'Done' ? undefined : `${lock.kind}/${lock.name}`;
  const job = operation === undefined ? undefined : annotations[ANNOTATIONS.job];
  const bootID = str(node.status?.nodeInfo?.bootID);
  const osImage = str(node.status?.nodeInfo?.osImage);
  return {
    name: node.metadata?.name ?? '',
    ...(group === undefined ? {} : { group }),
    ...(image === undefined || image === '' ? {} : { image }),
    ready: ready(node),
    unschedulable: node.spec?.unschedulable === true,
    ...(phase === undefined ? {} : { phase }),
    ...(phaseSince === undefined ? {} : { phaseSince }),
    ...(reason === undefined ? {} : { reason }),
    ...(operation === undefined ? {} : { operation }),
    ...(job === undefined ? {} : { job }),
    ...(bootID === undefined ? {} : { bootID }),
    ...(osImage === undefined ? {} : { osImage }),
  };
}

/** Sorted by group, then name, so the screen does not jump around. */
export function nodeViews(nodes: readonly V1Node[]): NodeView[] {
  return nodes
    .map(nodeView)
    .sort((a, b) => (a.group ?? '').localeCompare(b.group ?? '') || a.name.localeCompare(b.name));
}

export async function readNodes(kc: KubeConfig): Promise<V1Node[]> {
  const list = await kc.makeApiClient(CoreV1Api).listNode();
  return list.items;
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

function num(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

function obj(v: unknown): Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

const STATUS_FILE = /^status\/([^/]+)\/([^/]+)\.yaml$/;

/**
 * One spec's view from its status file (status/<Kind>/<name>.yaml on the status branch), read
 * back into the SpecStatus drydock wrote it from. A file that is not one still gets a line,
 * named by its path, that says so.
 */
function specView(file: string, read: SpecStatusRead): SpecView {
  if (!read.ok) {
    // The path is a file-system-safe version of the spec's name: near enough to say which file.
    const m = STATUS_FILE.exec(file);
    return {
      kind: m?.[1] ?? file,
      name: m?.[2] ?? '',
      phase: 'Unknown',
      done: 0,
      total: 0,
      lastError: `${file} is no spec status: ${read.why}`,
    };
  }
  const s = read.status;
  const nodePhases = phaseCounts(s.nodes);
  return {
    kind: s.spec.kind,
    name: s.spec.name,
    phase: s.phase,
    done: s.progress.done,
    total: s.progress.total,
    ...(s.waitingFor === undefined ? {} : { waitingFor: s.waitingFor }),
    ...(s.approvalWanted === undefined ? {} : { approvalWanted: s.approvalWanted }),
    ...(s.lastError === undefined ? {} : { lastError: s.lastError }),
    ...(s.sourceCommit === undefined ? {} : { sourceCommit: s.sourceCommit }),
    ...(nodePhases === undefined ? {} : { nodePhases }),
  };
}

/** Phases that need no more of a node: a status row in one of them is counted by progress. */
const SETTLED_ROWS: ReadonlySet<string> = new Set(['Done', 'UpToDate']);

/** The status file's node rows, counted by phase (settled rows left out); undefined when none is left. */
function phaseCounts(rows: readonly NodeRow[]): Record<string, number> | undefined {
  const counts: Record<string, number> = {};
  for (const { phase } of rows) if (!SETTLED_ROWS.has(phase)) counts[phase] = (counts[phase] ?? 0) + 1;
  return Object.keys(counts).length === 0 ? undefined : counts;
}

/** Every spec's view from the status branch's files under status/ (node files put back under their spec). */
export function specViews(files: ReadonlyMap<string, string>): SpecView[] {
  const views = [...readSpecStatuses(files)].map(([file, read]) => specView(file, read));
  return views.sort((a, b) => a.kind.localeCompare(b.kind) || a.name.localeCompare(b.name));
}

/**
 * One unlabelled sample of a Prometheus text exposition (what drydock serves on /metrics);
 * undefined when absent or not a number.
 */
export function metricValue(text: string, name: string): number | undefined {
  const m = new RegExp(`^${name}(?:\\{\\})? (\\S+)`, 'm').exec(text);
  const v = m?.[1] === undefined ? Number.NaN : Number(m[1]);
  return Number.isFinite(v) ? v : undefined;
}

/** Seconds since drydock's last successful fetch, from its /metrics; undefined before the first or when unreachable. */
export async function readLastFetch(metricsUrl: string): Promise<number | undefined> {
  try {
    const r = await fetch(metricsUrl, { signal: AbortSignal.timeout(2000) });
    if (!r.ok) return undefined;
    const v = metricValue(await r.text(), 'drydock_git_last_sync_age_seconds');
    return v === undefined || v < 0 ? undefined : v;
  } catch {
    return undefined;
  }
}

/** errors.yaml of the status branch: the newest commit drydock refused, and why. */
export function refusal(text: string | undefined): GitView['refused'] {
  if (text === undefined) return undefined;
  let doc: Record<string, unknown>;
  try {
    doc = obj(parseYaml(text));
  } catch {
    return undefined;
  }
  const commit = str(doc.commit);
  if (commit === undefined || !Array.isArray(doc.errors)) return undefined;
  const errors = doc.errors.map((e) => {
    const r = obj(e);
    return `${str(r.file) ?? '?'}:${num(r.line) ?? 0}:${num(r.column) ?? 0}: ${str(r.message) ?? 'invalid'}`;
  });
  return { commit, errors };
}

/** Reads the bare repository; status files are re-read only when the status branch moved. */
export class RepoReader {
  private cachedHead: string | undefined;
  private cachedSpecs: SpecView[] = [];
  private cachedRefusal: GitView['refused'];

  constructor(
    private readonly bare: string,
    readonly branch: string,
    readonly statusBranch: string,
  ) {}

  read(): { readonly git: GitView; readonly specs: readonly SpecView[] } {
    const head = readBranch(this.bare, this.branch);
    const status = readBranch(this.bare, this.statusBranch);
    if (status?.commit !== this.cachedHead) {
      this.cachedHead = status?.commit;
      this.cachedSpecs = status === undefined ? [] : specViews(readTree(this.bare, this.statusBranch, 'status'));
      this.cachedRefusal =
        status === undefined
          ? undefined
          : refusal(readTree(this.bare, this.statusBranch, 'errors.yaml').get('errors.yaml'));
    }
    const source = status?.trailers['Drydock-Source'];
    const git: GitView = {
      branch: this.branch,
      statusBranch: this.statusBranch,
      ...(head === undefined ? {} : { head: head.short, headSubject: head.subject }),
      ...(status === undefined ? {} : { statusHead: status.short, statusSubject: status.subject }),
      ...(source === undefined ? {} : { statusSource: source }),
      ...(this.cachedRefusal === undefined ? {} : { refused: this.cachedRefusal }),
    };
    return { git, specs: this.cachedSpecs };
  }
}
