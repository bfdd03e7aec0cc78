import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { askSecretOn } from './terminal.js';

function terminal() {
  const input = Object.assign(new PassThrough(), {
    raw: [] as boolean[],
    setRawMode(mode: boolean) {
      this.raw.push(mode);
      return this;
    },
  });
  let shown = '';
  const ask = askSecretOn(input as unknown as NodeJS.ReadStream, { write: (text: string) => (shown += text) });
  return { input, ask, shown: () => shown };
}

describe('asking for a secret on the terminal', () => {
  it('reads one line without echoing it, honours backspace, and leaves raw mode', async () => {
    const t = terminal();
    const answer = t.ask('Code: ');
    t.input.write('12x\u007f3456\r');
    expect(await answer).toBe('123456');
    expect(t.shown()).toBe('Code: \n');
    expect(t.input.raw).toEqual([true, false]);
  });

  it('Ctrl-C abandons it', async () => {
    const t = terminal();
    const answer = t.ask('Code: ');
    t.input.write('12\u0003');
    await expect(answer).rejects.toThrow('No two-factor code given');
    expect(t.input.raw).toEqual([true, false]);
  });
});
