// Just enough of EventSource for tests (stubbed on globalThis): streams are opened, fed and failed by hand.
export class FakeEventSource {
  static opened: FakeEventSource[] = [];
  onopen: ((event: Event) => void) | null = null;
  onmessage: ((event: MessageEvent<string>) => void) | null = null;
  onerror: ((event: Event) => void) | null = null;
  isClosed = false;
  private readonly listeners = new Map<string, ((event: MessageEvent<string>) => void)[]>();

  constructor(readonly url: string) {
    FakeEventSource.opened.push(this);
  }

  /** The stream opened last. */
  static latest(): FakeEventSource | undefined {
    return FakeEventSource.opened.at(-1);
  }

  close(): void {
    this.isClosed = true;
  }

  addEventListener(type: string, listener: (event: MessageEvent<string>) => void): void {
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), listener]);
  }

  /** Delivers one message whose `data:` is `value` as JSON; with `event`, as that named event (as EventSource does). */
  push(value: unknown, event?: string): void {
    const message = new MessageEvent(event ?? 'message', { data: JSON.stringify(value) });
    if (event === undefined) this.onmessage?.(message);
    else for (const listener of this.listeners.get(event) ?? []) listener(message);
  }

  /** The server answered: the stream is open. */
  open(): void {
    this.onopen?.(new Event('open'));
  }

  /** The stream fails, as a dropped or refused connection shows to the page. */
  fail(): void {
    this.onerror?.(new Event('error'));
  }
}
