/**
 * The simulated cloud reached over HTTP: what `drydock run` uses against a `drydock sim-cloud`
 * process, exactly as it would use a real cloud's API. Every failure comes back as a
 * CloudError: the server's typed code when it sent one, otherwise one derived from the
 * status; an unreachable server or a timeout is Transient.
 */
import { CloudError, type CloudProvider, type GroupDescription } from '../provider.js';
import type { SimFaultConfig } from './config.js';
import { cloudErrorFromResponse, simRoutes } from './http-api.js';
import { parseSimProviderID } from './nodes.js';

export interface SimHttpProviderOptions {
  /** Per request; default 10 000 ms. */
  readonly timeoutMs?: number;
}

export type SimFaultKind = 'Throttled' | 'Transient' | 'BootFailure';

export class SimHttpProvider implements CloudProvider {
  readonly name = 'sim' as const;
  readonly baseUrl: string;
  private readonly timeoutMs: number;

  constructor(baseUrl: string, options: SimHttpProviderOptions = {}) {
    let parsed: URL;
    try {
      parsed = new URL(baseUrl);
    } catch {
      throw new CloudError(
        'Permanent',
        `sim cloud URL ${JSON.stringify(baseUrl)} is not a URL; use e.g. http://127.0.0.1:7070`,
      );
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
      throw new CloudError('Permanent', `sim cloud URL ${JSON.stringify(baseUrl)} must start with http:// or https://`);
    }
    this.baseUrl = parsed.href.replace(/\/+$/, '');
    this.timeoutMs = options.timeoutMs ?? 10_000;
  }

  async listGroups(): Promise<readonly string[]> {
    const body = await this.request<{ groups: string[] }>('GET', simRoutes.groups(), 'list groups');
    return body.groups;
  }

  describeGroup(groupId: string): Promise<GroupDescription> {
    return this.request<GroupDescription>('GET', simRoutes.group(groupId), `describe group "${groupId}"`, { groupId });
  }

  async setGroupImage(groupId: string, image: string): Promise<void> {
    await this.request('PUT', simRoutes.image(groupId), `set image of group "${groupId}"`, { groupId }, { image });
  }

  async addCapacity(groupId: string, count: number): Promise<readonly string[]> {
    const body = await this.request<{ instanceIds: string[] }>(
      'POST',
      simRoutes.capacity(groupId),
      `add capacity to group "${groupId}"`,
      { groupId },
      { count },
    );
    return body.instanceIds;
  }

  async removeInstance(groupId: string, instanceId: string): Promise<void> {
    await this.request(
      'DELETE',
      simRoutes.instance(groupId, instanceId),
      `remove instance "${instanceId}" of group "${groupId}"`,
      {
        groupId,
        instanceId,
      },
    );
  }

  instanceForProviderID(providerID: string): { groupId: string; instanceId: string } | undefined {
    return parseSimProviderID(providerID);
  }

  // ---- fault control, for tests and the sandbox ----

  getFaults(): Promise<SimFaultConfig> {
    return this.request<SimFaultConfig>('GET', simRoutes.faults(), 'read fault settings');
  }

  async setFaults(patch: Partial<SimFaultConfig>): Promise<void> {
    await this.request('PUT', simRoutes.faults(), 'change fault settings', {}, patch);
  }

  /** The next `count` API calls fail with `kind`, or the next `count` boots never join. */
  async injectFaults(kind: SimFaultKind, count = 1): Promise<void> {
    await this.request('POST', simRoutes.injectFaults(), `inject ${kind} faults`, {}, { kind, count });
  }

  /** A Bottlerocket group's update repository offers `version` from now on (a release lands). */
  async publishBottlerocketRelease(groupId: string, version: string): Promise<void> {
    await this.request(
      'POST',
      simRoutes.bottlerocketReleases(groupId),
      `publish Bottlerocket ${version} to group "${groupId}"`,
      { groupId },
      { version },
    );
  }

  private async request<T>(
    method: 'GET' | 'PUT' | 'POST' | 'DELETE',
    route: string,
    what: string,
    ids: { groupId?: string; instanceId?: string } = {},
    body?: unknown,
  ): Promise<T> {
    const context = `sim cloud at ${this.baseUrl}: ${what}`;
    let response: Response;
    try {
      response = await fetch(this.baseUrl + route, {
        method,
        headers:
          body === undefined
            ? { accept: 'application/json' }
            : { accept: 'application/json', 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (err) {
      throw new CloudError('Transient', `${context}: ${unreachableReason(err, this.timeoutMs)}; retry`, ids);
    }
    const text = await response.text().catch(() => '');
    let parsed: unknown;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    if (!response.ok) {
      const err = cloudErrorFromResponse(response.status, response.headers.get('retry-after'), parsed, context);
      // Keep the ids of this call when the server's error did not carry them.
      throw new CloudError(err.code, err.message, { ...ids, ...err.data });
    }
    if (response.status !== 204 && parsed === undefined) {
      throw new CloudError('Transient', `${context}: the response was not JSON (HTTP ${response.status}); retry`, ids);
    }
    return parsed as T;
  }
}

function unreachableReason(err: unknown, timeoutMs: number): string {
  const e = err as { name?: string; cause?: { code?: string } };
  if (e.name === 'TimeoutError' || e.name === 'AbortError') return `no answer within ${timeoutMs} ms`;
  return `unreachable (${e.cause?.code ?? e.name ?? 'network error'})`;
}
