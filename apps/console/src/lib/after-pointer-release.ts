// A field validated on blur can show its message in the middle of a click: the pointer goes down on the next control,
// the first field blurs, its message pushes the layout down, and the pointer comes up over something else, so the
// click is lost (the gateway checkbox of the node form). While a pointer is pressed, such work waits until it is
// released and the click has been dispatched.

let pressedPointers = 0;
let waiting: (() => void)[] = [];

function release(): void {
  pressedPointers = 0;
  const run = waiting;
  waiting = [];
  // After the click that follows this pointerup has been dispatched.
  setTimeout(() => {
    for (const work of run) work();
  }, 0);
}

if (typeof document !== 'undefined') {
  document.addEventListener('pointerdown', () => (pressedPointers += 1), true);
  document.addEventListener('pointerup', release, true);
  document.addEventListener('pointercancel', release, true);
}

/** Runs `work` now, or once the pressed pointer is released. */
export function afterPointerRelease(work: () => void): void {
  if (pressedPointers === 0) work();
  else waiting.push(work);
}
