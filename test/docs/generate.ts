/** `npm run docs`: writes every generated page (pages.ts) where it belongs. */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './markdown.js';
import { generatePages } from './pages.js';

for (const page of await generatePages()) {
  const file = path.join(ROOT, page.file);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, page.text);
  console.log(`wrote ${page.file}`);
}
