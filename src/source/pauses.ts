/**
 * Who paused what: each pause written in Git (a spec's spec.paused, drydock.yaml's paused) gets
 * the author of the commit that set it and has held since (authorship.ts setBy), for status to
 * name. A pause whose history cannot be read stays a pause, without a name.
 */
import { parseAllDocuments } from 'yaml';
import type { DesiredState, NodeOp, Pause, SpecKind } from '../spec/model.js';
import type { Authorship } from './authorship.js';

/** setBy of the Git source: who set what `holds` reads in `file`, as of `commit`. */
export type SetBy = (file: string, holds: (text: string) => boolean) => Promise<Authorship | undefined>;

function paused(value: unknown): boolean {
  return typeof value === 'object' && value !== null && (value as { paused?: unknown }).paused === true;
}

/** Whether the file's text still pauses the spec `kind`/`name` (spec.paused: true). */
export function specPaused(kind: SpecKind, name: string): (text: string) => boolean {
  return (text) =>
    parseAllDocuments(text).some((d) => {
      if (!('toJS' in d)) return false;
      const doc: unknown = d.toJS();
      if (typeof doc !== 'object' || doc === null) return false;
      const { kind: k, metadata, spec } = doc as { kind?: unknown; metadata?: { name?: unknown }; spec?: unknown };
      return k === kind && metadata?.name === name && paused(spec);
    });
}

/** Whether drydock.yaml's text still pauses the repository (paused: true). */
export function repoPaused(text: string): boolean {
  const [doc] = parseAllDocuments(text);
  return doc !== undefined && 'toJS' in doc && paused(doc.toJS());
}

async function pauseOf(
  pause: Pause | undefined,
  file: string | undefined,
  holds: (text: string) => boolean,
  setBy: SetBy,
  unknown: (file: string, err: unknown) => void,
): Promise<Pause | undefined> {
  if (pause === undefined || file === undefined) return pause;
  try {
    const by = await setBy(file, holds);
    return by === undefined ? pause : { by: { name: by.name, email: by.email, commit: by.commit, at: by.at } };
  } catch (err) {
    unknown(file, err);
    return pause;
  }
}

/** The desired state with each pause's author filled in. */
export async function withPausers(
  desired: DesiredState,
  setBy: SetBy,
  unknown: (file: string, err: unknown) => void,
): Promise<DesiredState> {
  const of = <S extends { kind: SpecKind; name: string; source: { file: string }; paused?: Pause }>(s: S) =>
    pauseOf(s.paused, s.source.file, specPaused(s.kind, s.name), setBy, unknown);
  const config = desired.config;
  const repo = await pauseOf(config.paused, config.source?.file, repoPaused, setBy, unknown);
  const nodeImages = await Promise.all(desired.nodeImages.map(async (s) => withPause(s, await of(s))));
  const nodeOpUpgrades = await Promise.all(desired.nodeOpUpgrades.map(async (s) => withPause(s, await of(s))));
  const upgrades = new Map(nodeOpUpgrades.map((u) => [`NodeOpUpgrade/${u.name}`, u.paused]));
  const nodeOps = await Promise.all(
    desired.nodeOps.map(async (s: NodeOp) =>
      withPause(s, s.generatedBy !== undefined ? upgrades.get(s.generatedBy) : await of(s)),
    ),
  );
  return {
    ...desired,
    config: withPause(config, repo),
    nodeImages,
    nodeOpUpgrades,
    nodeOps,
  };
}

function withPause<S extends { paused?: Pause }>(s: S, pause: Pause | undefined): S {
  return pause === undefined ? s : { ...s, paused: pause };
}
