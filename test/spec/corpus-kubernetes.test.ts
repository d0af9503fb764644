/**
 * Values Kubernetes, git and the clouds would refuse later are refused at load, at their line:
 * label syntax, DNS names, int32 ranges, image references, rollouts that cannot progress,
 * branch names, cloud group ids compared as the cloud compares them, time zones, and medik8s'
 * eviction timeouts.
 */
import { branches, evictionTimeouts, groups, images, ints, labels, names, stalled, zones } from './cases-kubernetes.js';
import { runCorpus } from './corpus.js';

describe('spec corpus: Kubernetes label syntax', () => runCorpus(labels));
describe('spec corpus: node names and namespaces', () => runCorpus(names));
describe('spec corpus: int32 fields', () => runCorpus(ints));
describe('spec corpus: image references', () => runCorpus(images));
describe('spec corpus: rollouts that can never progress', () => runCorpus(stalled));
describe('spec corpus: git branch names', () => runCorpus(branches));
describe('spec corpus: cloud group ids compared as the cloud does', () => runCorpus(groups));
describe('spec corpus: IANA time zones only', () => runCorpus(zones));
describe('spec corpus: medik8s evictionTimeout as its CRD allows', () => runCorpus(evictionTimeouts));
