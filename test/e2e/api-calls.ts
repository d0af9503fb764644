/**
 * Kubernetes API requests as RBAC sees them (verb, group, resource, subresource, namespace),
 * read off the requests the counting proxy saw, and asked of the real API server with
 * SubjectAccessReviews.
 */
import { AuthorizationV1Api, type KubeConfig } from '@kubernetes/client-node';
import type { ProxiedRequest } from '../service/counting-proxy.js';

export interface ApiCall {
  readonly verb: string;
  readonly group: string;
  readonly resource: string;
  readonly subresource: string;
  /** '' for a cluster-scoped call or one across all namespaces. */
  readonly namespace: string;
  /** Set for a non-resource URL (discovery, /version). */
  readonly nonResource?: string;
}

const VERBS: Readonly<Record<string, readonly [string, string]>> = {
  // method → [verb on a named object, verb on a collection]
  GET: ['get', 'list'],
  POST: ['create', 'create'],
  PUT: ['update', 'update'],
  PATCH: ['patch', 'patch'],
  DELETE: ['delete', 'deletecollection'],
};

/** The RBAC attributes of one request, as the API server's request-info resolver reads them. */
export function apiCallOf(r: Pick<ProxiedRequest, 'method' | 'path'>): ApiCall {
  const url = new URL(r.path, 'http://x');
  const parts = url.pathname.split('/').filter(Boolean);
  const [named, collection] = VERBS[r.method] ?? ['', ''];
  let rest: string[];
  let group: string;
  if (parts[0] === 'api' && parts.length > 2) [group, rest] = ['', parts.slice(2)];
  else if (parts[0] === 'apis' && parts.length > 3) [group, rest] = [parts[1] ?? '', parts.slice(3)];
  else
    return {
      verb: r.method.toLowerCase(),
      group: '',
      resource: '',
      subresource: '',
      namespace: '',
      nonResource: url.pathname,
    };
  let namespace = '';
  if (rest[0] === 'namespaces' && rest.length >= 3) [namespace, rest] = [rest[1] ?? '', rest.slice(2)];
  const [resource = '', name, subresource = ''] = rest;
  const watch = /^(true|1)$/.test(url.searchParams.get('watch') ?? '');
  const verb = r.method === 'GET' && watch ? 'watch' : name === undefined ? collection : named;
  return { verb, group, resource, subresource, namespace };
}

export function callKey(c: ApiCall): string {
  if (c.nonResource !== undefined) return `${c.verb} ${c.nonResource}`;
  const res = c.subresource ? `${c.resource}/${c.subresource}` : c.resource;
  return `${c.verb} ${c.group || 'core'}/${res}${c.namespace ? ` in ${c.namespace}` : ''}`;
}

/** Whether the API server allows `user` (with `groups`) to make `call`. */
export async function allowed(admin: KubeConfig, user: string, groups: string[], call: ApiCall): Promise<boolean> {
  const api = admin.makeApiClient(AuthorizationV1Api);
  const review = await api.createSubjectAccessReview({
    body: {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: {
        user,
        groups,
        ...(call.nonResource !== undefined
          ? { nonResourceAttributes: { path: call.nonResource, verb: call.verb } }
          : {
              resourceAttributes: {
                verb: call.verb,
                group: call.group,
                resource: call.resource,
                subresource: call.subresource,
                namespace: call.namespace,
              },
            }),
      },
    },
  });
  return review.status?.allowed === true;
}
