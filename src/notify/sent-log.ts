/**
 * The sent-log: the ids of the events whose messages were handed to every receiver that wants
 * them (sent, or given up on and counted), kept in a ConfigMap in drydock's namespace so the
 * next leader, after a crash or a takeover, neither floods the receivers with what was sent nor
 * loses what was not: every event the status shows and the log lacks is sent again. A crash
 * between a delivery and the log's write resends that one message (at-least-once).
 *
 * Bounded: the ids the last snapshot shows plus the newest others, up to MAX_IDS, so an event
 * that comes and goes (an approval wait behind a closed window) is still not sent twice.
 */
import { CoreV1Api, type KubeConfig, type V1ConfigMap } from '@kubernetes/client-node';
import { httpStatus } from '../execute/classify.js';
import { mutatingCallDone, mutatingCallStarts } from '../execute/crash-point.js';
import { LABELS } from '../protocol/keys.js';

export const SENT_LOG_NAME = 'drydock-notifications';
export const MAX_IDS = 2_000;
/** The sent-log write's kind for the reliability suite's crash points. */
export const SENT_LOG_KIND = 'notifySentLog';

export interface SentLog {
  /** The ids sent, oldest first; undefined when no log exists yet (notifications just turned on). */
  load(): Promise<string[] | undefined>;
  save(ids: readonly string[]): Promise<void>;
}

/** Keeps every id the snapshot shows, then the newest of the rest, up to MAX_IDS. */
export function boundIds(ids: readonly string[], shown: ReadonlySet<string>, max = MAX_IDS): string[] {
  if (ids.length <= max) return [...ids];
  const keepShown = ids.filter((id) => shown.has(id));
  const rest = ids.filter((id) => !shown.has(id));
  const room = Math.max(0, max - keepShown.length);
  const keep = new Set([...keepShown, ...rest.slice(rest.length - room)]);
  return ids.filter((id) => keep.has(id));
}

/** In memory only: a restart starts from the first snapshot it sees (tests, and --leader-elect=false without a namespace). */
export function memorySentLog(initial?: readonly string[]): SentLog & { ids: string[] | undefined } {
  const log = {
    ids: initial ? [...initial] : undefined,
    load: () => Promise.resolve(log.ids ? [...log.ids] : undefined),
    save: (ids: readonly string[]) => {
      log.ids = [...ids];
      return Promise.resolve();
    },
  };
  return log;
}

export function configMapSentLog(kubeConfig: KubeConfig, namespace: string): SentLog {
  const api = kubeConfig.makeApiClient(CoreV1Api);
  const ref = { name: SENT_LOG_NAME, namespace };
  let known: V1ConfigMap | undefined;
  const body = (ids: readonly string[]): V1ConfigMap => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      ...(known?.metadata ?? {}),
      ...ref,
      labels: { ...(known?.metadata?.labels ?? {}), [LABELS.managedBy]: 'drydock' },
    },
    data: { sent: ids.join('\n') },
  });
  return {
    async load() {
      try {
        known = await api.readNamespacedConfigMap(ref);
      } catch (err) {
        if (httpStatus(err) === 404) return undefined;
        throw err;
      }
      const text = known.data?.sent ?? '';
      return text === '' ? [] : text.split('\n');
    },
    async save(ids) {
      // A crash point (reliability suite only): killed before this write the next leader resends
      // what was delivered since the last one; killed after it, nothing is resent.
      mutatingCallStarts(SENT_LOG_KIND, SENT_LOG_NAME);
      await write(ids);
      mutatingCallDone(SENT_LOG_KIND, SENT_LOG_NAME);
    },
  };

  async function write(ids: readonly string[]): Promise<void> {
    // Only the leader writes; a conflict (another writer) reads again and writes over it.
    for (let attempt = 1; ; attempt++) {
      try {
        known =
          known === undefined
            ? await api.createNamespacedConfigMap({ namespace, body: body(ids), fieldManager: 'drydock' })
            : await api.replaceNamespacedConfigMap({ ...ref, body: body(ids), fieldManager: 'drydock' });
        return;
      } catch (err) {
        const status = httpStatus(err);
        if ((status !== 409 && status !== 404) || attempt >= 3) throw err;
        known = status === 404 ? undefined : await api.readNamespacedConfigMap(ref);
      }
    }
  }
}
