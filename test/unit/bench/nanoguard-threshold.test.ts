import { thresholdAtFpr } from '../../../bench/_nanoguard';

const flagged = (scores: number[], t: number): number => scores.filter((s) => s >= t).length;

describe('thresholdAtFpr (the peer detector at our false-positive rate)', () => {
  const benign = [0.95, 0.9, 0.8, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1, 0.05];

  it('flags exactly the allowed share of benign rows when the scores are distinct', () => {
    expect(flagged(benign, thresholdAtFpr(benign, 0.1))).toBe(1);
    expect(flagged(benign, thresholdAtFpr(benign, 0.3))).toBe(3);
    expect(flagged(benign, thresholdAtFpr(benign, 0))).toBe(0);
  });

  it('never exceeds the rate when scores tie at the cut', () => {
    const tied = [0.9, 0.9, 0.9, 0.1];
    expect(flagged(tied, thresholdAtFpr(tied, 0.5))).toBe(0);
  });

  it('flags everything when the rate allows every benign row', () => {
    expect(thresholdAtFpr(benign, 1)).toBe(0);
  });
});
