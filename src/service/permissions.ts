/**
 * Every Kubernetes API call drydock's service makes, as RBAC sees it. deploy/rbac.yaml grants
 * exactly these (a test compares them), and the e2e suite runs the service under that RBAC.
 * Add a row here whenever code starts making a new kind of call.
 */
export interface Permission {
  readonly apiGroup: string;
  readonly resource: string;
  readonly verbs: readonly string[];
  /** 'cluster': a ClusterRole; 'namespace': a Role in drydock's own namespace. */
  readonly scope: 'cluster' | 'namespace';
  /** Which code makes the call. */
  readonly usedBy: string;
}

export const REQUIRED_PERMISSIONS: readonly Permission[] = [
  {
    apiGroup: '',
    resource: 'nodes',
    verbs: ['list', 'watch'],
    scope: 'cluster',
    usedBy: 'observe/cluster-cache (informer)',
  },
  {
    apiGroup: '',
    resource: 'nodes',
    verbs: ['get', 'patch'],
    scope: 'cluster',
    usedBy: 'execute/actions cordon, uncordon, annotateNode, copyLabels',
  },
  { apiGroup: '', resource: 'nodes', verbs: ['delete'], scope: 'cluster', usedBy: 'execute/actions deleteNode' },
  {
    apiGroup: '',
    resource: 'pods',
    verbs: ['list', 'watch'],
    scope: 'cluster',
    usedBy: 'observe/cluster-cache (informer)',
  },
  {
    apiGroup: '',
    resource: 'pods',
    verbs: ['delete'],
    scope: 'cluster',
    usedBy: 'execute/actions deletePod (drain.force only); execute/node-jobs deleteRebootPod',
  },
  {
    apiGroup: '',
    resource: 'pods',
    verbs: ['create', 'get'],
    scope: 'namespace',
    usedBy: "execute/node-jobs createRebootPod (reboot pods run in drydock's namespace)",
  },
  {
    apiGroup: '',
    resource: 'pods',
    verbs: ['list'],
    scope: 'namespace',
    usedBy: "execute/node-jobs readJobOutcome (a Job's pods)",
  },
  {
    apiGroup: 'batch',
    resource: 'jobs',
    verbs: ['create', 'get', 'delete'],
    scope: 'namespace',
    usedBy:
      "execute/node-jobs createJob, deleteFinishedJob (node Jobs, and UpgradeGate Jobs whose template names no namespace, run in drydock's namespace)",
  },
  { apiGroup: '', resource: 'pods/eviction', verbs: ['create'], scope: 'cluster', usedBy: 'execute/actions evict' },
  { apiGroup: '', resource: 'events', verbs: ['create'], scope: 'cluster', usedBy: 'execute/events' },
  {
    apiGroup: 'policy',
    resource: 'poddisruptionbudgets',
    verbs: ['list', 'watch'],
    scope: 'cluster',
    usedBy: 'observe/cluster-cache (informer)',
  },
  {
    apiGroup: 'apps',
    resource: 'deployments',
    verbs: ['list', 'watch'],
    scope: 'cluster',
    usedBy: 'observe/cluster-cache (informer)',
  },
  {
    apiGroup: 'apps',
    resource: 'statefulsets',
    verbs: ['list', 'watch'],
    scope: 'cluster',
    usedBy: 'observe/cluster-cache (informer: the health gate waits for evicted workloads to be ready)',
  },
  {
    apiGroup: 'apps',
    resource: 'replicasets',
    verbs: ['list', 'watch'],
    scope: 'cluster',
    usedBy: "observe/cluster-cache (informer: which Deployment a pod's ReplicaSet belongs to)",
  },
  {
    apiGroup: 'apps',
    resource: 'deployments',
    verbs: ['get', 'patch'],
    scope: 'cluster',
    usedBy: 'execute/actions scaleDeployment',
  },
  {
    apiGroup: 'batch',
    resource: 'jobs',
    verbs: ['list', 'watch'],
    scope: 'cluster',
    usedBy: 'observe/cluster-cache (informer, drydock-labelled)',
  },
  {
    apiGroup: 'coordination.k8s.io',
    resource: 'leases',
    verbs: ['get', 'create', 'update'],
    scope: 'namespace',
    usedBy: 'service/leader',
  },
  {
    apiGroup: 'coordination.k8s.io',
    resource: 'leases',
    verbs: ['patch'],
    scope: 'namespace',
    usedBy: 'service/leader requestSync (a standby relays a webhook)',
  },
];
