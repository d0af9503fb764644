import { strict as assert } from 'node:assert';
import { shortCommit } from '../../src/commit.js';
import { cell } from '../../src/report/markdown.js';

describe('report text: table cells and short commits', () => {
  const cells: Array<[string, string]> = [
    ['plain', 'plain'],
    ['a | b', 'a \\| b'],
    ['C:\\path', 'C:\\\\path'],
    ['ends in \\', 'ends in \\\\'],
    ['two\nlines\r\nhere', 'two lines here'],
    ['  padded  ', 'padded'],
  ];
  for (const [text, want] of cells) it(`cell(${JSON.stringify(text)})`, () => assert.equal(cell(text), want));

  it('a cell never ends the table row early: every pipe in it is escaped', () => {
    const row = `| ${cell('x \\| y')} |`;
    assert.equal(row.split(/(?<!\\)\|/).length - 2, 1);
  });

  it("shortCommit: seven hex digits, or the caller's word for none", () => {
    assert.equal(shortCommit('0123456789abcdef'), '0123456');
    assert.equal(shortCommit(undefined, 'unknown'), 'unknown');
    assert.equal(shortCommit(undefined), 'none');
  });
});
