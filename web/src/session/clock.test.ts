import { describe, expect, it } from 'vitest';
import { ServerClock, estimate } from './clock';

describe('estimate', () => {
  it('keeps the sample with the shortest round trip, at its midpoint', () => {
    const e = estimate([
      { sentAt: 100, receivedAt: 180, serverTime: 10_000 }, // 80 ms
      { sentAt: 200, receivedAt: 210, serverTime: 10_100 }, // 10 ms: midpoint 205
      { sentAt: 300, receivedAt: 340, serverTime: 10_250 }, // 40 ms
    ]);
    expect(e).toEqual({ offset: 10_100 - 205, roundTrip: 10 });
  });

  it('skips samples that cannot be (a clock going back, no time) and answers null without any', () => {
    expect(estimate([])).toBeNull();
    expect(estimate([{ sentAt: 50, receivedAt: 40, serverTime: 1 }])).toBeNull();
    expect(estimate([{ sentAt: 0, receivedAt: 4, serverTime: NaN }, { sentAt: 10, receivedAt: 30, serverTime: 5000 }])).toEqual({ offset: 4980, roundTrip: 20 });
  });
});

/** fakeServer answers GET /api/time from a server clock `skew` ms ahead of the page's monotonic clock, with the given one-way delays. */
function fakeServer(skew: number, delays: Array<[number, number]>) {
  let mono = 1000;
  let i = 0;
  return {
    monotonic: () => mono,
    fetchTime: async () => {
      const [up, down] = delays[i++ % delays.length];
      mono += up;
      const t = mono + skew;
      mono += down;
      return t;
    },
    advance: (ms: number) => (mono += ms),
  };
}

describe('ServerClock', () => {
  it('knows nothing before a sync, then the server time within half the best round trip', async () => {
    // Symmetric delays give the exact time; the asymmetric 3 ms sample is
    // not the best one (its round trip is longer).
    const srv = fakeServer(600_000, [[40, 60], [3, 2], [2, 2], [30, 5]]);
    const clock = new ServerClock({ fetchTime: srv.fetchTime, monotonic: srv.monotonic, samples: 4 });
    expect(clock.now()).toBeNull();
    await clock.sync();
    expect(clock.getEstimate()?.roundTrip).toBe(4);
    expect(clock.now()).toBe(srv.monotonic() + 600_000);
    srv.advance(90_000);
    expect(clock.now()).toBe(srv.monotonic() + 600_000);
  });

  it('an uneven best round trip errs by at most half of it', async () => {
    const srv = fakeServer(-1234, [[9, 1]]);
    const clock = new ServerClock({ fetchTime: srv.fetchTime, monotonic: srv.monotonic, samples: 3 });
    await clock.sync();
    const err = (clock.now() ?? 0) - (srv.monotonic() - 1234);
    expect(Math.abs(err)).toBeLessThanOrEqual(5);
    expect(err).toBe(4); // the answer left 9 ms after the question: 4 ms later than the midpoint
  });

  it('a failed sync keeps the estimate; a later one replaces it and tells the listeners', async () => {
    let fail = false;
    const srv = fakeServer(5000, [[1, 1]]);
    const clock = new ServerClock({ fetchTime: () => (fail ? Promise.reject(new Error('offline')) : srv.fetchTime()), monotonic: srv.monotonic, samples: 2 });
    let told = 0;
    const off = clock.onChange(() => told++);
    await clock.sync();
    expect(told).toBe(1);
    const first = clock.getEstimate();
    fail = true;
    await clock.sync();
    expect(clock.getEstimate()).toBe(first);
    expect(told).toBe(1);
    fail = false;
    await clock.sync();
    expect(told).toBe(2);
    off();
    await clock.sync();
    expect(told).toBe(2);
  });

  it('joins a sync under way instead of starting another', async () => {
    let asked = 0;
    const clock = new ServerClock({ fetchTime: async () => (asked++, 1), monotonic: () => 0, samples: 3 });
    await Promise.all([clock.sync(), clock.sync()]);
    expect(asked).toBe(3);
  });
});
