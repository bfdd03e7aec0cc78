// Just enough of EventSource for tests (stubbed on globalThis): streams are opened, fed and failed by hand.
export class FakeEventSource {
  static opened: FakeEventSource[] = [];
  onopen: ((event: Event) => void) | null = null;
  onmessage: ((event: MessageEvent<string>) => void) | null = null;
  onerror: ((event: Event) => void) | null = null;
  isClosed = false;

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

  /** Delivers one message whose `data:` is `value` as JSON. */
  push(value: unknown): void {
    this.onmessage?.(new MessageEvent('message', { data: JSON.stringify(value) }));
  }

  /** The stream fails, as a dropped or refused connection shows to the page. */
  fail(): void {
    this.onerror?.(new Event('error'));
  }
}
