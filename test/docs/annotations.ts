/**
 * docs/reference/annotations.md from src/protocol/keys.ts, the one home of every drydock.dev/
 * key: the values come from the module as the service imports it, the words from the doc
 * comments beside each key (read with the TypeScript compiler, so they have no second home).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import * as keys from '../../src/protocol/keys.js';
import { ROOT, code, generatedNote, table } from './markdown.js';

const SOURCE = 'src/protocol/keys.ts';

/** One exported constant of the module: its doc comment and, for an object, each property's. */
interface Documented {
  readonly doc: string;
  readonly properties: ReadonlyMap<string, string>;
  /** Objects spread into this one, whose properties' comments it inherits. */
  readonly spreads: readonly string[];
}

function docOf(node: ts.Node): string {
  return ts
    .getJSDocCommentsAndTags(node)
    .filter(ts.isJSDoc)
    .map((d) => ts.getTextOfJSDocComment(d.comment) ?? '')
    .join(' ')
    .replace(/\s+/g, ' ')
    .trim();
}

function readComments(): Map<string, Documented> {
  const file = ts.createSourceFile(SOURCE, readFileSync(path.join(ROOT, SOURCE), 'utf8'), ts.ScriptTarget.ES2022, true);
  const out = new Map<string, Documented>();
  for (const statement of file.statements) {
    if (ts.isFunctionDeclaration(statement) && statement.name) {
      out.set(statement.name.text, { doc: docOf(statement), properties: new Map(), spreads: [] });
    }
    if (!ts.isVariableStatement(statement)) continue;
    for (const decl of statement.declarationList.declarations) {
      if (!ts.isIdentifier(decl.name)) continue;
      let init = decl.initializer;
      while (init && (ts.isAsExpression(init) || ts.isSatisfiesExpression(init))) init = init.expression;
      const properties = new Map<string, string>();
      const spreads: string[] = [];
      if (init && ts.isObjectLiteralExpression(init)) {
        for (const p of init.properties) {
          if (ts.isSpreadAssignment(p) && ts.isIdentifier(p.expression)) spreads.push(p.expression.text);
          else if (p.name && (ts.isIdentifier(p.name) || ts.isStringLiteral(p.name)))
            properties.set(p.name.text, docOf(p));
        }
      }
      out.set(decl.name.text, { doc: docOf(statement), properties, spreads });
    }
  }
  return out;
}

/** A property's comment, from the object itself or from an object spread into it. */
function propertyDoc(comments: Map<string, Documented>, object: string, property: string): string {
  const own = comments.get(object);
  const doc = own?.properties.get(property);
  if (doc) return doc;
  for (const from of own?.spreads ?? []) {
    const inherited = propertyDoc(comments, from, property);
    if (inherited) return inherited;
  }
  return '';
}

/** The key maps the page lists, in the module's order, with the heading each gets. */
const MAPS = [
  ['ANNOTATIONS', 'Annotations'],
  ['LABELS', 'Labels'],
  ['JOB_LABELS', 'Labels on Jobs and pods'],
  ['JOB_ANNOTATIONS', 'Annotations on Jobs and pods'],
] as const;

export function annotationsPage(): { markdown: string; keys: number } {
  const comments = readComments();
  const missing: string[] = [];
  const distinct = new Set<string>();
  const sections: string[] = [];
  for (const [name, heading] of MAPS) {
    const map: Readonly<Record<string, string>> = keys[name];
    const rows = Object.entries(map).map(([property, key]) => {
      const doc = propertyDoc(comments, name, property);
      if (!doc) missing.push(`${name}.${property}`);
      distinct.add(key);
      return [code(key), code(`${name}.${property}`), doc];
    });
    sections.push(
      [`## ${heading}`, '', comments.get(name)?.doc ?? '', '', table(['Key', 'Constant', 'What it holds'], rows)].join(
        '\n',
      ),
    );
  }
  if (missing.length > 0)
    throw new Error(`${SOURCE}: add a doc comment to ${missing.join(', ')}; the reference takes its words from there`);

  const taint = keys.DRAIN_PENDING_TAINT;
  distinct.add(taint.key);
  sections.push(
    [
      '## Taints',
      '',
      table(
        ['Key', 'Effect', 'Constant', 'What it means'],
        [
          [
            code(taint.key),
            code(taint.effect),
            code('DRAIN_PENDING_TAINT'),
            comments.get('DRAIN_PENDING_TAINT')?.doc ?? '',
          ],
        ],
      ),
    ].join('\n'),
  );
  sections.push(
    [
      '## Node phases',
      '',
      `${comments.get('NODE_PHASES')?.doc ?? ''} (${code('NODE_PHASES')})`,
      '',
      keys.NODE_PHASES.map((p, i) => `${i + 1}. ${code(p)}`).join('\n'),
    ].join('\n'),
  );
  sections.push(
    [
      '## NodeOp records',
      '',
      `${comments.get('NODEOP_RECORD_DOMAIN')?.doc ?? ''} (${code('NODEOP_RECORD_DOMAIN')}, ${code(keys.NODEOP_RECORD_DOMAIN)})`,
      '',
      `${comments.get('nodeOpRecordKey')?.doc ?? ''} For example ${code(keys.nodeOpRecordKey('rotate-logs'))}.`,
      '',
      `${comments.get('NODEOP_SELECTION_DOMAIN')?.doc ?? ''} (${code('NODEOP_SELECTION_DOMAIN')}, ${code(keys.NODEOP_SELECTION_DOMAIN)})`,
      '',
      `${comments.get('nodeOpSelectionKey')?.doc ?? ''} For example ${code(keys.nodeOpSelectionKey('hello'))}.`,
    ].join('\n'),
  );
  sections.push(
    [
      '## Bottlerocket records',
      '',
      `${comments.get('BOTTLEROCKET_RECORD_DOMAIN')?.doc ?? ''} (${code('BOTTLEROCKET_RECORD_DOMAIN')}, ${code(keys.BOTTLEROCKET_RECORD_DOMAIN)})`,
      '',
      `${comments.get('bottlerocketRecordKey')?.doc ?? ''} For example ${code(keys.bottlerocketRecordKey('bottlerocket-in-place'))} = ${code('3f2a9c1 1.20.3')}.`,
    ].join('\n'),
  );

  const markdown = [
    generatedNote(SOURCE),
    '',
    '# Annotations and labels',
    '',
    `drydock keeps its state on the objects themselves, under ${code(keys.DRYDOCK_PREFIX)}: ${distinct.size} distinct keys below, each defined once in ${code(SOURCE)}. A restarted or second replica, the status branch and ${code('kubectl get nodes -L drydock.dev/phase')} all read them.`,
    '',
    ...sections.flatMap((s) => [s, '']),
  ].join('\n');
  return { markdown, keys: distinct.size };
}
