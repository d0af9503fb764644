/**
 * The rules other systems apply to values drydock passes on, checked when the spec is loaded so
 * that the error names the line it was written on rather than surfacing later from the API
 * server, git or the container runtime. Each rule is a function returning what is wrong (or
 * undefined); the schemas name them as ajv formats and the validator uses the same function to
 * say why a value failed.
 *
 * Kubernetes rules follow k8s.io/apimachinery/pkg/util/validation; the image reference grammar
 * is the one of github.com/distribution/reference; branch names follow git check-ref-format.
 */

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;

export type Problem = string | undefined;

export function dns1123Label(s: string): Problem {
  if (s.length > 63) return `is ${s.length} characters long; at most 63 are allowed`;
  if (!DNS1123_LABEL.test(s))
    return 'must be a DNS label: lowercase letters, digits and "-", starting and ending with a letter or digit';
  return undefined;
}

export function dns1123Subdomain(s: string): Problem {
  if (s.length > 253) return `is ${s.length} characters long; at most 253 are allowed`;
  if (!DNS1123_SUBDOMAIN.test(s))
    return 'must be a DNS subdomain: lowercase letters, digits, "-" and ".", each part starting and ending with a letter or digit';
  return undefined;
}

/** A label key: an optional DNS subdomain prefix and "/", then a name of at most 63 characters. */
export function labelKey(s: string): Problem {
  const slash = s.lastIndexOf('/');
  const [prefix, name] = slash < 0 ? [undefined, s] : [s.slice(0, slash), s.slice(slash + 1)];
  if (prefix !== undefined) {
    if (prefix === '') return 'has an empty prefix before "/"';
    const p = dns1123Subdomain(prefix);
    if (p !== undefined) return `prefix ${JSON.stringify(prefix)} ${p}`;
  }
  if (name === '') return 'has an empty name';
  if (name.length > 63) return `name part is ${name.length} characters long; at most 63 are allowed`;
  if (!QUALIFIED_NAME.test(name))
    return 'name part must be letters, digits, "-", "_" and ".", starting and ending with a letter or digit';
  return undefined;
}

export function labelValue(s: string): Problem {
  if (s.length > 63) return `is ${s.length} characters long; at most 63 are allowed`;
  if (s !== '' && !QUALIFIED_NAME.test(s))
    return 'must be empty, or letters, digits, "-", "_" and ".", starting and ending with a letter or digit';
  return undefined;
}

// distribution/reference: [domain[:port]/]path[:tag][@digest]
const ALNUM = '[a-z0-9]+';
const SEPARATOR = '(?:[._]|__|[-]+)';
const PATH_COMPONENT = `${ALNUM}(?:${SEPARATOR}${ALNUM})*`;
const DOMAIN_COMPONENT = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])';
const DOMAIN = `(?:${DOMAIN_COMPONENT}(?:\\.${DOMAIN_COMPONENT})*|\\[[0-9a-fA-F:]+\\])(?::[0-9]+)?`;
const TAG = '[\\w][\\w.-]{0,127}';
const DIGEST = '[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}';
const REFERENCE = new RegExp(`^(?:${DOMAIN}/)?${PATH_COMPONENT}(?:/${PATH_COMPONENT})*(?::${TAG})?(?:@${DIGEST})?$`);

/** Whitespace (a trailing newline from a `|` block, a stray space) names no image anywhere. */
export function imageText(s: string): Problem {
  const ws = /\s/.exec(s);
  if (ws === null) return undefined;
  const where = ws.index === s.length - 1 ? 'ends with' : ws.index === 0 ? 'starts with' : 'holds';
  return `${where} ${ws[0] === '\n' ? 'a newline (a "|" block keeps it; use a plain scalar)' : 'whitespace'}`;
}

export function containerImage(s: string): Problem {
  const ws = imageText(s);
  if (ws !== undefined) return ws;
  if (s.length > 4096) return 'is longer than 4096 characters';
  if (!REFERENCE.test(s)) {
    if (/[A-Z]/.test(s.split(/[:@]/)[0]!.split('/').slice(1).join('/')))
      return 'has uppercase letters in the repository path; image repositories are lowercase';
    return 'is not an image reference like registry.example/team/image:tag or image@sha256:<digest>';
  }
  return undefined;
}

/** git check-ref-format, for a branch name written without "refs/heads/". */
export function gitBranch(s: string): Problem {
  if (s.startsWith('refs/')) return 'names a full ref; write the branch name without "refs/heads/"';
  if (s === '@') return 'is "@", which git reserves';
  if (s.startsWith('-')) return 'starts with "-"';
  if (s.startsWith('/') || s.endsWith('/')) return 'starts or ends with "/"';
  if (s.endsWith('.')) return 'ends with "."';
  if (s.includes('..')) return 'holds ".."';
  if (s.includes('@{')) return 'holds "@{"';
  if (s.includes('//')) return 'holds "//"';
  // eslint-disable-next-line no-control-regex -- git refuses control characters in ref names: this finds them
  const bad = /[\x00-\x20\x7f~^:?*[\\]/.exec(s);
  if (bad)
    return `holds ${bad[0] === ' ' ? 'a space' : JSON.stringify(bad[0])}, which git does not allow in a branch name`;
  for (const part of s.split('/')) {
    if (part.startsWith('.')) return `has a part ${JSON.stringify(part)} starting with "."`;
    if (part.endsWith('.lock')) return `has a part ${JSON.stringify(part)} ending in ".lock"`;
  }
  return undefined;
}

/** Every format the schemas name, with the rule that checks it. */
export const FORMATS: Readonly<Record<string, (s: string) => Problem>> = {
  'dns1123-label': dns1123Label,
  'dns1123-subdomain': dns1123Subdomain,
  'label-key': labelKey,
  'label-value': labelValue,
  'image-text': imageText,
  'container-image': containerImage,
  'git-branch': gitBranch,
};

/** What each format expects, for hints where the schema has no description of its own (a label key or value). */
export const FORMAT_HINTS: Readonly<Record<string, string>> = {
  'dns1123-label':
    'a DNS label: at most 63 lowercase letters, digits and "-", starting and ending with a letter or digit, e.g. kube-system',
  'dns1123-subdomain':
    'a DNS subdomain: at most 253 lowercase letters, digits, "-" and ".", e.g. worker-1.example.internal',
  'label-key':
    'a label key is [prefix/]name: the prefix a DNS subdomain (example.com), the name at most 63 letters, digits, "-", "_" and ".", starting and ending with a letter or digit, e.g. app.kubernetes.io/name',
  'label-value':
    'a label value is empty or at most 63 letters, digits, "-", "_" and ".", starting and ending with a letter or digit, e.g. v1.2',
  'image-text': 'write the image without spaces or line breaks',
  'container-image': 'write an image reference like registry.example/team/tool:v1 or tool@sha256:<digest>',
  'git-branch': 'write a branch name git accepts, e.g. drydock/status',
};

/** Kubernetes stores counts, seconds and limits as int32. */
export const INT32_MAX = 2147483647;
