// Notifier: the sync engine's subscriptions for React. However many changes
// arrive in one frame (a burst of live messages, a pointer moving at 120 Hz,
// a batch of edits), subscribers are told at most once per animation frame;
// they then read the latest snapshot.

/** FrameScheduler runs a callback once, at the next frame (tests pass their own). */
export type FrameScheduler = (cb: () => void) => void;

/**
 * animationFrame runs cb at the next animation frame. A hidden tab gets no
 * frames, and some environments (tests, workers) have none at all: a timer
 * runs cb then, whichever comes first.
 */
export const animationFrame: FrameScheduler = (cb) => {
  let done = false;
  const run = () => {
    if (done) return;
    done = true;
    cb();
  };
  const raf = (globalThis as { requestAnimationFrame?: (cb: () => void) => number }).requestAnimationFrame;
  const hidden = (globalThis as { document?: { visibilityState?: string } }).document?.visibilityState === 'hidden';
  if (raf && !hidden) {
    raf(run);
    setTimeout(run, 250); // the tab may be hidden before the frame comes
  } else {
    setTimeout(run, 16);
  }
};

/** Notifier tells its subscribers about changes, at most once per frame. */
export class Notifier {
  private readonly cbs = new Set<() => void>();
  private scheduled = false;
  private closed = false;

  constructor(private readonly frame: FrameScheduler = animationFrame) {}

  /** subscribe adds a listener; returns the unsubscribe function. */
  subscribe = (cb: () => void): (() => void) => {
    this.cbs.add(cb);
    return () => {
      this.cbs.delete(cb);
    };
  };

  /** notify schedules one call of every subscriber at the next frame. */
  notify(): void {
    if (this.scheduled || this.closed || this.cbs.size === 0) return;
    this.scheduled = true;
    this.frame(() => {
      this.scheduled = false;
      if (this.closed) return;
      [...this.cbs].forEach((cb) => cb());
    });
  }

  /** close drops every subscriber and any call still scheduled; safe twice. */
  close(): void {
    this.closed = true;
    this.cbs.clear();
  }
}
