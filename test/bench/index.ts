/**
 * `npm run bench`: runs the `run()` of every benchmark module in this folder, in name order,
 * and prints what each reports.
 */
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(new URL('.', import.meta.url));
const modules = readdirSync(here)
  .filter((f) => f.endsWith('.js') && f !== 'index.js')
  .sort();
for (const file of modules) {
  const mod = (await import(new URL(file, import.meta.url).href)) as { run?: () => unknown };
  if (typeof mod.run !== 'function') continue;
  console.log(`# ${file.replace(/\.js$/, '')}`);
  await mod.run();
}
