import { strict as assert } from 'node:assert';
import { addMissingHead } from '../../src/source/http.js';

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);

/** pkt-line framing, written out by hand for the expected values. */
const pkt = (s: string): string => `${(s.length + 4).toString(16).padStart(4, '0')}${s}`;
const advert = (...refs: string[]): Buffer =>
  Buffer.from(`${pkt('# service=git-upload-pack\n')}0000${refs.map(pkt).join('')}0000`, 'latin1');

describe('ref advertisement repair (remote HEAD naming a missing branch)', () => {
  it('adds HEAD, carrying the capabilities, when only branches are advertised', () => {
    const input = advert(`${A} refs/heads/main\0multi_ack side-band-64k\n`, `${B} refs/heads/other\n`);
    const want = advert(`${A} HEAD\0multi_ack side-band-64k\n`, `${A} refs/heads/main\n`, `${B} refs/heads/other\n`);
    assert.equal(addMissingHead(input).toString('latin1'), want.toString('latin1'));
  });

  const unchanged: Array<[string, Buffer]> = [
    ['HEAD already advertised', advert(`${A} HEAD\0caps\n`, `${A} refs/heads/main\n`)],
    ['an empty repository', advert(`${'0'.repeat(40)} capabilities^{}\0caps\n`)],
    ['not pkt-lines at all', Buffer.from('<html>not git</html>')],
  ];
  for (const [name, input] of unchanged) {
    it(`leaves ${name} unchanged`, () =>
      assert.equal(addMissingHead(input).toString('latin1'), input.toString('latin1')));
  }
});
