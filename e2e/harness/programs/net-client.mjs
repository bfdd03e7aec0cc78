// Client side of TCP/UDP checks, run inside the client namespace.
//   tcp HOST PORT MESSAGE TIMEOUT_MS [SOURCE_IP]   send MESSAGE, print the first reply
//   udp HOST PORT MESSAGE TIMEOUT_MS [SOURCE_IP]   same over UDP
//   tcp-hold HOST PORT [SOURCE_IP]                  keep a connection open: stdin lines are sent, replies printed
//                                                   as "reply:..."; prints "open" when connected, "closed" at the end
// Exit codes: 0 answered, 2 error (refused, reset), 3 no answer before the timeout.
import { connect } from 'node:net';
import { createSocket } from 'node:dgram';
import { createInterface } from 'node:readline';

const [mode, host, portText, ...rest] = process.argv.slice(2);
const port = Number(portText);
const fail = (code, message) => {
  process.stderr.write(`${message}\n`);
  process.exit(code);
};

if (mode === 'tcp' || mode === 'udp') {
  const [message, timeoutText, source] = rest;
  setTimeout(() => fail(3, 'timeout'), Number(timeoutText)).unref();
  if (mode === 'tcp') {
    const socket = connect({ host, port, ...(source ? { localAddress: source } : {}) }, () => socket.write(message));
    socket.once('data', (data) => {
      process.stdout.write(String(data));
      process.exit(0);
    });
    socket.once('error', (error) => fail(2, error.message));
    socket.once('close', () => fail(2, 'closed without an answer'));
  } else {
    const socket = createSocket('udp4');
    socket.once('message', (data) => {
      process.stdout.write(String(data));
      process.exit(0);
    });
    socket.once('error', (error) => fail(2, error.message));
    socket.bind({ port: 0, ...(source ? { address: source } : {}) }, () => socket.send(message, port, host));
  }
} else if (mode === 'tcp-hold') {
  const [source] = rest;
  const socket = connect({ host, port, ...(source ? { localAddress: source } : {}) }, () =>
    process.stdout.write('open\n'),
  );
  socket.on('data', (data) => process.stdout.write(`reply:${data}\n`));
  socket.on('error', (error) => process.stdout.write(`error:${error.message}\n`));
  socket.on('close', () => {
    process.stdout.write('closed\n');
    process.exit(0);
  });
  createInterface({ input: process.stdin }).on('line', (line) => socket.write(line));
} else {
  fail(64, `unknown mode ${mode}`);
}
