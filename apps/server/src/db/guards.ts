import { AsyncLocalStorage } from 'node:async_hooks';
// Imported, not the global: a test's fake timers replace the global setImmediate, and the watch must keep running.
import { clearImmediate, setImmediate } from 'node:timers';
import type { Logger } from 'drizzle-orm';

// The rules of a store's transactions, checked at run time on both engines (docs/ARCHITECTURE.md, "Data layer"):
// inside a transaction every statement goes through its `tx` (on PostgreSQL a read on the store is another
// connection and does not see the transaction's writes), a `tx` is used only while its transaction is open, a
// transaction is not opened inside another, and a transaction awaits nothing but its own statements. The statement
// checks run in drizzle's `logger` hook, which every driver calls with each statement before running it: a throw
// there fails the statement before it reaches the database.

export const NESTED_WRITE_MESSAGE = 'store.write called inside store.write: pass the transaction down instead';
export const READ_ON_STORE_MESSAGE =
  'a read on the store inside store.write: read through tx (on PostgreSQL the store does not see the writes of tx)';
export const TX_CLOSED_MESSAGE = 'tx used after its transaction ended: a tx is valid only inside its store.write';
export const WRITE_SPANNED_IO_MESSAGE =
  'store.write awaited something other than the database (a timer, a file, the network, a thread-pool hash): the ' +
  'transaction was rolled back. Do that work before the write or after it.';

export type TransactionKind = 'write' | 'snapshot';

export interface TransactionContext<Connection> {
  /** False once the transaction committed or rolled back: a continuation that outlives it is outside it. */
  open: boolean;
  readonly kind: TransactionKind;
  /** The connection the transaction runs on (PostgreSQL: a pooled client; SQLite: the one writing connection). */
  readonly connection: Connection;
  /** Statements sent and not answered yet (PostgreSQL's; the embedded engine answers before the call returns). */
  pending: number;
  /** Set by the guard: called when `pending` comes back to 0. */
  onIdle?: () => void;
}

/** Runs one statement of the transaction of `context`, counted (the guard's question: waiting for a statement?). */
export async function statementOf<R, Connection>(
  context: TransactionContext<Connection>,
  run: () => Promise<R>,
): Promise<R> {
  context.pending += 1;
  try {
    return await run();
  } finally {
    context.pending -= 1;
    if (context.pending === 0) context.onIdle?.();
  }
}

/** One store's transaction bookkeeping: which transaction (if any) the running code is inside. */
export function createTransactionGuards<Connection>() {
  const contexts = new AsyncLocalStorage<TransactionContext<Connection>>();
  // On Node 20 a storage in use keeps async_hooks' promise hooks on for the whole process: every promise anywhere
  // (each async call of every API request) paid a hook, ~0.1 µs, though a transaction is open for a small share of
  // the time (bench/README.md, api.ts). So the storage is enabled only while a transaction of this store runs
  // (`run` enables it) and disabled when the last one settles. Outside a transaction `getStore` is then undefined,
  // which is what an open transaction's absence means to `current` anyway (a closed one reads `open: false`).
  let running = 0;
  const current = (): TransactionContext<Connection> | undefined => {
    const context = contexts.getStore();
    return context?.open ? context : undefined;
  };
  const settled = (): void => {
    running -= 1;
    if (running === 0) contexts.disable();
  };
  return {
    current,
    /**
     * Runs `work` inside `context` and settles with it, unless it awaits something other than the transaction's
     * statements (`awaitsOnlyStatements`): then the context closes at once and the answer is `refusal`.
     */
    run<T>(context: TransactionContext<Connection>, work: () => Promise<T>, refusal: Error): Promise<T> {
      // `work` may hand back drizzle's query unawaited (`(tx) => tx.insert(…)`), a thenable that runs its statement
      // when `then` is called: called here, inside the context, not later by whoever awaits the answer.
      const inContext = (): Promise<T> => new Promise<T>((resolve, reject) => void work().then(resolve, reject));
      running += 1;
      const outcome = awaitsOnlyStatements(() => contexts.run(context, inContext), context, refusal);
      outcome.then(settled, settled);
      return outcome;
    },
    /** The logger of the store's own (read) database: refuses a statement issued inside one of its transactions. */
    storeLogger: {
      logQuery: () => {
        if (current()) throw new Error(READ_ON_STORE_MESSAGE);
      },
    } satisfies Logger,
    /** The logger of the database behind `tx`: refuses a statement issued outside an open transaction. */
    txLogger: {
      logQuery: () => {
        if (!current()) throw new Error(TX_CLOSED_MESSAGE);
      },
    } satisfies Logger,
  };
}

/**
 * Settles with `work`, unless at a turn of the event loop `work` is still pending while none of its statements is:
 * then it waits for something else (a timer, a file, the network, a hash on the thread pool), and holds the write
 * lock meanwhile (SQLite's, or the advisory lock every PostgreSQL gateway's writes take). The context closes at once
 * (what `work` does after that is refused by the guards), its outcome is dropped, and the answer is `refusal`; the
 * caller rolls back.
 *
 * Sound because an answer and everything it resumes run in the same turn: the embedded engine answers before its
 * call returns, and a PostgreSQL answer resolves in the socket's callback, whose promise continuations (drizzle's, then
 * the caller's, up to its next statement) all run before the loop reaches `setImmediate`'s phase.
 */
function awaitsOnlyStatements<T, Connection>(
  work: () => Promise<T>,
  context: TransactionContext<Connection>,
  refusal: Error,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let isSettled = false;
    // Armed only while no statement is pending (at the start and at each answer), so a long statement costs nothing.
    let watchdog: NodeJS.Immediate | undefined;
    const watch = (): void => {
      watchdog = undefined;
      if (isSettled || context.pending > 0) return;
      isSettled = true;
      context.open = false;
      reject(refusal);
    };
    context.onIdle = () => (watchdog ??= setImmediate(watch));
    context.onIdle();
    const settle = (outcome: () => void): void => {
      if (isSettled) return;
      isSettled = true;
      if (watchdog) clearImmediate(watchdog);
      outcome();
    };
    // `work` does not throw: a throw inside it is its promise's rejection (createTransactionGuards's run).
    work().then(
      (value) => settle(() => resolve(value)),
      (error: unknown) => settle(() => reject(error instanceof Error ? error : new Error(String(error)))),
    );
  });
}
