/**
 * Credentials never leave the process: URLs are shown without user info, and any text that may
 * carry a secret (an underlying library's message) is scrubbed of known secret values and of
 * user info in URLs before it reaches a log, an error or the status branch.
 */

const SECRET_QUERY_KEYS = /token|secret|password|passwd|key|sig|auth/i;

/** The URL without user info, and with secret-looking query values masked. Non-URLs pass through. */
export function redactUrl(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return redactText(url);
  }
  if (!/^[a-z][a-z0-9+.-]*:$/i.test(u.protocol) || u.protocol === 'file:') return url;
  u.username = '';
  u.password = '';
  for (const key of [...u.searchParams.keys()]) {
    if (SECRET_QUERY_KEYS.test(key)) u.searchParams.set(key, '***');
  }
  return u.toString();
}

/** Replaces every `scheme://user:pass@` and every given secret value (≥ 4 characters) with ***. */
export function redactText(text: string, secrets: readonly string[] = []): string {
  let out = text.replace(/([a-z][a-z0-9+.-]*:\/\/)[^/@\s]*@/gi, '$1***@');
  for (const s of secrets) {
    if (s.length >= 4) out = out.split(s).join('***');
  }
  return out;
}
