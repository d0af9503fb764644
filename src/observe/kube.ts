/**
 * The Kubernetes client drydock uses everywhere: a KubeConfig that reports every request made
 * through it, so the service can count API requests (the /metrics counter, the idle-reconcile
 * benchmark) without a proxy. Both entry points client-node 1.x uses are covered: generated
 * API clients call `applySecurityAuthentication` once per request; watches call
 * `applyToFetchOptions` once per watch connection.
 */
import { CodedError } from '../errors.js';
import { KubeConfig } from '@kubernetes/client-node';
import type { RequestContext } from '@kubernetes/client-node';

export interface ApiRequest {
  readonly method: string;
  /** Path and query, without the server part. */
  readonly path: string;
  readonly watch: boolean;
}

export type RequestListener = (request: ApiRequest) => void;

export class KubeConfigError extends CodedError<'kubeconfig', { readonly file?: string }> {
  override readonly name = 'KubeConfigError';
  constructor(message: string, data: { readonly file?: string } = {}) {
    super('kubeconfig', message, data);
  }
}

export class CountingKubeConfig extends KubeConfig {
  private readonly listeners: RequestListener[] = [];
  private total = 0;

  /** Requests made so far through this config. */
  get requestCount(): number {
    return this.total;
  }

  onRequest(listener: RequestListener): () => void {
    this.listeners.push(listener);
    return () => {
      const i = this.listeners.indexOf(listener);
      if (i >= 0) this.listeners.splice(i, 1);
    };
  }

  private emit(request: ApiRequest): void {
    this.total += 1;
    for (const l of this.listeners) l(request);
  }

  override async applySecurityAuthentication(context: RequestContext): Promise<void> {
    const url = new URL(context.getUrl());
    this.emit({ method: String(context.getHttpMethod()), path: url.pathname + url.search, watch: false });
    return super.applySecurityAuthentication(context);
  }

  override async applyToFetchOptions(
    opts: Parameters<KubeConfig['applyToFetchOptions']>[0],
  ): ReturnType<KubeConfig['applyToFetchOptions']> {
    this.emit({ method: 'GET', path: '(watch)', watch: true });
    return super.applyToFetchOptions(opts);
  }
}

/**
 * Loads a kubeconfig: the file when given, otherwise the usual places (KUBECONFIG, ~/.kube/config,
 * in-cluster service account). Throws KubeConfigError with what to do when none is usable.
 */
export function loadKubeConfig(file?: string): CountingKubeConfig {
  const kc = new CountingKubeConfig();
  try {
    if (file) kc.loadFromFile(file);
    else kc.loadFromDefault();
  } catch (err) {
    throw new KubeConfigError(
      `cannot read kubeconfig${file ? ` ${file}` : ''}: ${err instanceof Error ? err.message : String(err)}; pass --kubeconfig or set KUBECONFIG`,
      file ? { file } : {},
    );
  }
  if (!kc.getCurrentCluster()) {
    throw new KubeConfigError(
      `kubeconfig${file ? ` ${file}` : ''} names no current cluster; set current-context or pass --kubeconfig`,
      file ? { file } : {},
    );
  }
  return kc;
}

/** A second config over the same cluster and user, with its own request count (e.g. for the lease). */
export function cloneKubeConfig(kc: KubeConfig): CountingKubeConfig {
  const copy = new CountingKubeConfig();
  copy.loadFromString(kc.exportConfig());
  return copy;
}
