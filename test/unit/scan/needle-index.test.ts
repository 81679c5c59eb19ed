/**
 * The needle index answers exactly what `text.includes(needle)` answers for every needle, in one
 * pass: checked on the technique rules' own needles and on random text built from their pieces.
 */
import { NeedleGate, NeedleIndex } from '../../../src/scan/engines/needle-index';
import { TECHNIQUE_RULES } from '../../../src/scan/engines/attack-techniques';
import { INDICATORS } from '../../../src/scan/engines/payload/code-extraction';
import { RULES } from '../../../src/scan/engines/payload/pi-rules';

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
    const index = new NeedleIndex(TECHNIQUE_RULES.flatMap((r) => r.needles));
    for (const text of randomTexts(index.needles, 200, 7)) {
      expect([...index.present(text)]).toEqual(byIncludes(index.needles, text));
      expect(index.occursIn(text)).toBe(byIncludes(index.needles, text).includes(1));
    }
  });

  it('occursIn answers whether any needle occurs', () => {
    const index = new NeedleIndex(['netcat', 'socat']);
    expect(index.occursIn('run socat now')).toBe(true);
    expect(index.occursIn('net cat so cat')).toBe(false);
    expect(index.occursIn('')).toBe(false);
  });
});

describe('NeedleGate', () => {
  it('answers per item what some(includes) answers, for items sharing needles', () => {
    const a = { needles: ['curl', 'wget'] };
    const b = { needles: ['wget'] };
    const c = { needles: ['iex'] };
    const gate = new NeedleGate([a, b, c]);
    const has = gate.in('wget http://x | sh');
    expect([has(a), has(b), has(c)]).toEqual([true, true, false]);
    expect(gate.in('nothing here')(a)).toBe(false);
    expect(gate.in('anything')({ needles: ['any'] })).toBe(false);
  });

  it.each([
    ['prompt-injection rules', RULES],
    ['code indicators', INDICATORS],
    ['technique rules', TECHNIQUE_RULES],
  ] as const)("agrees with the engines' old includes check on the %s", (_name, items) => {
    const gate = new NeedleGate<{ needles: readonly string[] }>(items);
    for (const text of randomTexts([...new Set(items.flatMap((i) => i.needles))], 100, 11)) {
      const has = gate.in(text);
      for (const item of items) expect(has(item)).toBe(item.needles.some((n) => text.includes(n)));
    }
  });
});

/** Random texts made of needles whole, cut short, and noise (a character outside ASCII among it). */
function randomTexts(needles: readonly string[], count: number, seed: number): string[] {
  const rand = (n: number): number => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed % n;
  };
  const texts: string[] = [];
  for (let k = 0; k < count; k++) {
    const parts: string[] = [];
    for (let j = 0; j < 60; j++) {
      const n = needles[rand(needles.length)];
      parts.push(rand(3) === 0 ? n.slice(0, 1 + rand(n.length)) : rand(4) === 0 ? ' x\u00e9 ' : n);
    }
    texts.push(parts.join(rand(2) ? '' : ' '));
  }
  return texts;
}
