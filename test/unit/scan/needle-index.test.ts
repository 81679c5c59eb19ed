/**
 * The needle index answers exactly what `text.includes(needle)` answers for every needle, in one
 * pass: checked on the technique rules' own needles and on random text built from their pieces.
 */
import { NeedleIndex } from '../../../src/scan/engines/needle-index';
import { TECHNIQUE_RULES } from '../../../src/scan/engines/attack-techniques';

const byIncludes = (needles: readonly string[], text: string): number[] => needles.map((n) => (text.includes(n) ? 1 : 0));

describe('NeedleIndex', () => {
  it('finds overlapping needles, needles inside needles and needles at both ends', () => {
    const index = new NeedleIndex(['he', 'she', 'his', 'hers', 'nc', 'netcat', 'cat', 'a']);
    const text = 'ushers use netcat';
    expect([...index.present(text)]).toEqual(byIncludes(index.needles, text));
    expect([...index.present('')]).toEqual(index.needles.map(() => 0));
  });

  it('restarts after a character outside ASCII, as includes would find nothing across it', () => {
    const index = new NeedleIndex(['netcat', 'cat']);
    expect([...index.present('net\u00e9cat')]).toEqual([0, 1]);
    expect([...index.present('netcat\u4e2d')]).toEqual([1, 1]);
  });

  it('refuses needles it cannot answer for', () => {
    expect(() => new NeedleIndex(['caf\u00e9'])).toThrow(/ASCII/);
    expect(() => new NeedleIndex([''])).toThrow(/non-empty/);
  });

  it("agrees with includes on the technique rules' needles over random text made of their pieces", () => {
    const needles = [...new Set(TECHNIQUE_RULES.flatMap((r) => r.needles))];
    const index = new NeedleIndex(needles);
    let seed = 7;
    const rand = (n: number): number => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed % n;
    };
    for (let k = 0; k < 200; k++) {
      const parts: string[] = [];
      for (let j = 0; j < 60; j++) {
        const n = needles[rand(needles.length)];
        // A needle whole, cut short, or noise between them.
        parts.push(rand(3) === 0 ? n.slice(0, 1 + rand(n.length)) : rand(4) === 0 ? ' x\u00e9 ' : n);
      }
      const text = parts.join(rand(2) ? '' : ' ');
      expect([...index.present(text)]).toEqual(byIncludes(index.needles, text));
    }
  });
});
