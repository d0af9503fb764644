// Posts drydock-plan.md as a merge request note, or updates the note drydock posted before
// (found by the marker its first line carries). Uses GitLab's predefined CI variables.
import { readFileSync } from 'node:fs';

const MARKER = '<!-- drydock-plan -->';
const body = readFileSync(process.argv[2], 'utf8');
const token = process.env.DRYDOCK_GITLAB_TOKEN;
if (!token) {
  console.error('DRYDOCK_GITLAB_TOKEN is not set: add a project access token with the api scope as a masked CI/CD variable');
  process.exit(2);
}
const api = `${process.env.CI_API_V4_URL}/projects/${process.env.CI_PROJECT_ID}/merge_requests/${process.env.CI_MERGE_REQUEST_IID}/notes`;
const headers = { 'PRIVATE-TOKEN': token, 'content-type': 'application/json' };

async function call(url, init) {
  const res = await fetch(url, { headers, ...init });
  if (!res.ok) throw new Error(`${init?.method ?? 'GET'} ${url}: HTTP ${res.status}`);
  return res.json();
}

let mine;
for (let page = 1; mine === undefined; page++) {
  const notes = await call(`${api}?per_page=100&page=${page}`);
  if (notes.length === 0) break;
  mine = notes.find((n) => typeof n.body === 'string' && n.body.startsWith(MARKER));
}
if (mine) await call(`${api}/${mine.id}`, { method: 'PUT', body: JSON.stringify({ body }) });
else await call(api, { method: 'POST', body: JSON.stringify({ body }) });
console.log(`${mine ? 'updated' : 'posted'} the drydock plan note`);
