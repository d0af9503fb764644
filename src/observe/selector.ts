/**
 * Label selector matching with Kubernetes' semantics, for PDB coverage and node selectors.
 * An empty selector ({}) matches everything; an absent one matches nothing (policy/v1 PDBs).
 */
import type { LabelSelector } from '../spec/model.js';

export function matchesSelector(
  selector: LabelSelector | undefined,
  labels: Readonly<Record<string, string>>,
): boolean {
  if (!selector) return false;
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    if (labels[key] !== value) return false;
  }
  for (const req of selector.matchExpressions ?? []) {
    const has = Object.prototype.hasOwnProperty.call(labels, req.key);
    const value = labels[req.key];
    const values = req.values ?? [];
    switch (req.operator) {
      case 'In':
        if (!has || value === undefined || !values.includes(value)) return false;
        break;
      case 'NotIn':
        if (has && value !== undefined && values.includes(value)) return false;
        break;
      case 'Exists':
        if (!has) return false;
        break;
      case 'DoesNotExist':
        if (has) return false;
        break;
    }
  }
  return true;
}

/** A selector in the `a=b,c in (d,e)` string form the API's labelSelector parameter takes. */
export function selectorString(selector: LabelSelector): string {
  const parts: string[] = [];
  for (const [k, v] of Object.entries(selector.matchLabels ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    parts.push(`${k}=${v}`);
  }
  for (const req of selector.matchExpressions ?? []) {
    const values = [...(req.values ?? [])].sort().join(',');
    if (req.operator === 'In') parts.push(`${req.key} in (${values})`);
    else if (req.operator === 'NotIn') parts.push(`${req.key} notin (${values})`);
    else if (req.operator === 'Exists') parts.push(req.key);
    else parts.push(`!${req.key}`);
  }
  return parts.join(',');
}
