import type { ControlClient } from '../nginx/control-client.js';
import type { NginxHolds } from './held.js';

const TOKEN_RE = /^[A-Za-z0-9_-]{1,256}$/;

/** HTTP-01 answers, served on port 80 by nginx itself (POST /acme). */
export class ChallengePusher {
  constructor(
    private readonly control: ControlClient,
    private readonly holds: NginxHolds,
  ) {}

  async set(token: string, answer: string): Promise<void> {
    if (!TOKEN_RE.test(token)) throw new Error('malformed ACME challenge token');
    await this.control.post('/acme', { set: { [token]: answer } });
    this.holds.challenges?.set(token, answer);
  }

  async remove(token: string): Promise<void> {
    if (!TOKEN_RE.test(token)) return;
    await this.control.post('/acme', { del: [token] });
    this.holds.challenges?.delete(token);
  }

  /** Makes nginx answer exactly these challenges. */
  async sync(answers: ReadonlyMap<string, string>): Promise<void> {
    const pushed = this.holds.challenges;
    const set: Record<string, string> = {};
    for (const [token, answer] of answers)
      if (TOKEN_RE.test(token) && pushed?.get(token) !== answer) set[token] = answer;
    const del = pushed === null ? [] : [...pushed.keys()].filter((token) => !answers.has(token));
    if (Object.keys(set).length === 0 && del.length === 0) {
      this.holds.challenges ??= new Map();
      return;
    }
    this.holds.challenges = null;
    await this.control.post('/acme', { set, ...(del.length > 0 ? { del } : {}) }).catch((err: unknown) => {
      this.holds.countRefusal(err);
      throw err;
    });
    this.holds.challenges = new Map([...answers].filter(([token]) => TOKEN_RE.test(token)));
  }
}
