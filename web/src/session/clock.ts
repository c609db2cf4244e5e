// The server's clock as this page estimates it (docs/live-protocol.md, "The
// timer"), NTP's way: ask GET /api/time a few times, and keep the answer
// that came back fastest, taking the server's time to be what it was half
// way through that round trip. The estimate is an offset from the page's
// monotonic clock (performance.now()), not from Date: a computer whose
// clock is wrong, or that sets it while the board is open, still counts
// down with everyone else.

/** ClockSample is one question: when it left and when its answer came (monotonic ms), and the server's time in it. */
export interface ClockSample {
  sentAt: number;
  receivedAt: number;
  serverTime: number;
}

/** ClockEstimate says server time ≈ monotonic time + offset, learnt over a round trip of roundTrip ms (the error is at most half of it). */
export interface ClockEstimate {
  offset: number;
  roundTrip: number;
}

/** estimate keeps the sample with the shortest round trip; null when there is no usable one. */
export function estimate(samples: readonly ClockSample[]): ClockEstimate | null {
  let best: ClockEstimate | null = null;
  for (const s of samples) {
    const roundTrip = s.receivedAt - s.sentAt;
    if (!(roundTrip >= 0) || !Number.isFinite(s.serverTime)) continue;
    if (best && roundTrip >= best.roundTrip) continue;
    best = { offset: s.serverTime - (s.sentAt + s.receivedAt) / 2, roundTrip };
  }
  return best;
}

export interface ServerClockOptions {
  /** fetchTime asks the server for its time (unix ms). */
  fetchTime: () => Promise<number>;
  /** monotonic is the page's clock that never jumps (performance.now()). */
  monotonic?: () => number;
  /** samples is how many questions one sync asks, one after the other (default 5). */
  samples?: number;
}

/**
 * ServerClock holds the estimate of the server's time. sync() asks again
 * (on start and on every reconnect: a computer that slept may have a
 * monotonic clock that stood still); now() is the server's time by the
 * latest estimate, null before the first.
 */
export class ServerClock {
  private est: ClockEstimate | null = null;
  private running: Promise<void> | null = null;
  private readonly listeners = new Set<() => void>();
  private readonly monotonic: () => number;
  private readonly samples: number;

  constructor(private readonly opts: ServerClockOptions) {
    this.monotonic = opts.monotonic ?? (() => performance.now());
    this.samples = opts.samples ?? 5;
  }

  /** sync samples the server's clock; a sync already under way is joined, not repeated. A failed sync keeps the estimate there was. */
  sync(): Promise<void> {
    this.running ??= this.sample().finally(() => (this.running = null));
    return this.running;
  }

  private async sample(): Promise<void> {
    const got: ClockSample[] = [];
    for (let i = 0; i < this.samples; i++) {
      const sentAt = this.monotonic();
      try {
        const serverTime = await this.opts.fetchTime();
        got.push({ sentAt, receivedAt: this.monotonic(), serverTime });
      } catch {
        // Offline or refused: the other samples may do.
      }
    }
    const e = estimate(got);
    if (!e) return;
    this.est = e;
    for (const cb of [...this.listeners]) cb();
  }

  /** now is the server's time (unix ms) by the estimate, null before the first sync that succeeded. */
  now(): number | null {
    return this.est ? this.monotonic() + this.est.offset : null;
  }

  /** getEstimate is the current estimate (a new object after each sync: useSyncExternalStore's snapshot). */
  getEstimate = (): ClockEstimate | null => this.est;

  /** onChange calls cb after each sync that changed the estimate; it returns the unsubscribe. */
  onChange = (cb: () => void): (() => void) => {
    this.listeners.add(cb);
    return () => this.listeners.delete(cb);
  };
}
