import { CliError } from './errors.js';

// Asking the person at the terminal for a secret (a two-factor code): nothing is echoed, so it is neither on the
// screen nor in a terminal recording. Only wired when standard input is a terminal; a script passes a file instead.

/** Reads one line from a terminal `input` in raw mode; Ctrl-C or the end of input abandons it. */
export function askSecretOn(
  input: NodeJS.ReadStream,
  output: { write(text: string): unknown },
): (question: string) => Promise<string> {
  return (question) =>
    new Promise((resolve, reject) => {
      output.write(question);
      let text = '';
      const finish = (outcome: () => void) => {
        input.off('data', onData);
        input.off('end', onEnd);
        input.setRawMode(false);
        input.pause();
        output.write('\n');
        outcome();
      };
      const onEnd = () => finish(() => reject(new CliError('No two-factor code given')));
      const onData = (chunk: Buffer) => {
        for (const char of chunk.toString('utf8')) {
          if (char === '\r' || char === '\n') {
            finish(() => resolve(text));
            return;
          }
          if (char === '\u0003' || char === '\u0004') {
            onEnd();
            return;
          }
          text = char === '\u007f' || char === '\b' ? text.slice(0, -1) : text + char;
        }
      };
      input.setRawMode(true);
      input.on('data', onData);
      input.on('end', onEnd);
      input.resume();
    });
}
