/**
 * A small seeded pseudo-random generator (mulberry32): the same seed gives the same faults
 * in the same order, so a failing run can be replayed. Its whole state is one 32-bit number,
 * which the simulator persists so a restart continues the sequence instead of repeating it.
 */
export class SeededRandom {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** The generator's state, to persist and restore with `SeededRandom.fromState`. */
  get snapshot(): number {
    return this.state;
  }

  static fromState(state: number): SeededRandom {
    return new SeededRandom(state);
  }

  /** A number in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** True with probability `p` (0 never draws, so a fault rate of 0 leaves the sequence alone). */
  chance(p: number): boolean {
    if (p <= 0) return false;
    return this.next() < p;
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    if (max <= min) return min;
    return min + Math.floor(this.next() * (max - min + 1));
  }
}
