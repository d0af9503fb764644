/**
 * The HTTP client handed to isomorphic-git: its node client, plus one repair. A remote whose
 * HEAD names a branch that does not exist (a bare repository created with `master` as default
 * that only holds `main`) advertises no HEAD at all, and isomorphic-git 1.44's fetch then
 * fails with "Could not find HEAD" after updating refs but before saving the pack, even when
 * the ref to fetch is given. When the ref advertisement of git-upload-pack lacks a HEAD line,
 * one is added, pointing at the first advertised branch. HEAD is only used to report the
 * remote's default branch, which drydock ignores: what is fetched is always the named branch.
 */
import nodeHttp from 'isomorphic-git/http/node';
import type { GitHttpRequest, GitHttpResponse, HttpClient } from 'isomorphic-git';
import { errorCode } from './errors.js';

async function collect(body: AsyncIterableIterator<Uint8Array> | undefined): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  if (body) for await (const c of body) chunks.push(c);
  return Buffer.concat(chunks);
}

async function* once(chunk: Uint8Array): AsyncGenerator<Uint8Array> {
  yield chunk;
}

function pkt(payload: string): Buffer {
  const len = Buffer.byteLength(payload) + 4;
  return Buffer.from(len.toString(16).padStart(4, '0') + payload, 'utf8');
}

/** Splits a pkt-line stream into payloads; a flush packet is returned as null. */
function splitPkts(buf: Buffer): Array<string | null> | undefined {
  const out: Array<string | null> = [];
  let at = 0;
  while (at < buf.length) {
    const len = Number.parseInt(buf.subarray(at, at + 4).toString('latin1'), 16);
    if (!Number.isFinite(len)) return undefined;
    if (len === 0) {
      out.push(null);
      at += 4;
      continue;
    }
    if (len < 4 || at + len > buf.length) return undefined;
    out.push(buf.subarray(at + 4, at + len).toString('latin1'));
    at += len;
  }
  return out;
}

/** The advertisement with a HEAD line added when it has branches but no HEAD; else unchanged. */
export function addMissingHead(advert: Buffer): Buffer {
  const pkts = splitPkts(advert);
  if (!pkts) return advert;
  // Smart HTTP: "# service=..." then flush, then the refs, then flush.
  const start = pkts[0]?.startsWith('# service=') ? pkts.indexOf(null) + 1 : 0;
  const first = pkts[start];
  if (typeof first !== 'string') return advert;
  const nul = first.indexOf('\0');
  if (nul < 0) return advert;
  const [oid, name] = first.slice(0, nul).split(' ');
  if (!oid || !name || name === 'capabilities^{}') return advert;
  const refs = pkts.slice(start).filter((p): p is string => typeof p === 'string');
  if (refs.some((r) => r.split(/[ \0\n]/)[1] === 'HEAD')) return advert;
  const caps = first.slice(nul + 1).replace(/\n$/, '');
  const rebuilt: Buffer[] = pkts.slice(0, start).map((p) => (p === null ? Buffer.from('0000') : pkt(p)));
  rebuilt.push(pkt(`${oid} HEAD\0${caps}\n`));
  rebuilt.push(pkt(`${first.slice(0, nul)}\n`));
  for (const p of pkts.slice(start + 1)) rebuilt.push(p === null ? Buffer.from('0000') : Buffer.from(pkt(p)));
  return Buffer.concat(rebuilt);
}

/** Socket idle time after which a request is given up (a server that accepts and never answers). */
export const DEFAULT_IDLE_TIMEOUT_MS = 30_000;

class RequestTimeoutError extends Error {
  override readonly name = 'RequestTimeoutError';
  readonly code = 'ETIMEDOUT';
}

/** isomorphic-git's node client with the HEAD repair and an idle timeout, so no fetch hangs. */
export function createHttpClient(idleTimeoutMs = DEFAULT_IDLE_TIMEOUT_MS): HttpClient {
  return {
    async request(req: GitHttpRequest): Promise<GitHttpResponse> {
      const started = Date.now();
      let res: GitHttpResponse;
      try {
        res = await nodeHttp.request({
          ...req,
          fetchOptions: { timeout: idleTimeoutMs, ...(req.fetchOptions as Record<string, unknown> | undefined) },
        });
      } catch (err) {
        // simple-get reports its own timeout without a code; give it one (decided by time, not text).
        if (errorCode(err) === undefined && Date.now() - started >= idleTimeoutMs)
          throw new RequestTimeoutError(`no answer within ${idleTimeoutMs} ms`);
        throw err;
      }
      const isAdvert = (req.method ?? 'GET') === 'GET' && req.url.includes('/info/refs?service=git-upload-pack');
      if (!isAdvert || res.statusCode !== 200) return res;
      const body = addMissingHead(await collect(res.body));
      return { ...res, body: once(body) };
    },
  };
}
