import { describe, expect, it } from 'vitest';
import { LiveSocket, CLOSE_RESYNC, CLOSE_ACCESS_WITHDRAWN, CLOSE_NO_PONG } from './socket';
import { connectionBadge } from './badge';
import { FakeClock, FakeEnv, FakeSocket } from './testing';

function setup() {
  const clock = new FakeClock();
  const env = new FakeEnv(clock);
  const sockets: FakeSocket[] = [];
  let since = 0;
  const live = new LiveSocket({
    url: () => `ws://x/api/boards/b/live?since=${since}`,
    open: (url) => {
      const s = new FakeSocket(url);
      sockets.push(s);
      return s;
    },
    env,
  });
  const statuses: string[] = [];
  live.onStatus((s) => statuses.push(s));
  return { clock, env, sockets, live, statuses, setSince: (v: number) => (since = v) };
}

describe('LiveSocket', () => {
  it('connects, reports online and passes messages on', () => {
    const { live, sockets, statuses } = setup();
    const got: unknown[] = [];
    live.onMessage((m) => got.push(m));
    live.connect();
    sockets[0].open();
    sockets[0].message({ type: 'join', id: 'p', email: 'a@x', color: '#000' });
    expect(statuses).toEqual(['connecting', 'online']);
    expect(got).toEqual([{ type: 'join', id: 'p', email: 'a@x', color: '#000' }]);
    expect(live.send({ type: 'pointer', x: 1, y: 2 })).toBe(true);
    expect(sockets[0].sent).toEqual(['{"type":"pointer","x":1,"y":2}']);
  });

  it('reconnects with growing, jittered delays and resumes from the latest version', () => {
    const { live, sockets, clock, setSince } = setup();
    live.connect();
    sockets[0].open();
    setSince(7);
    sockets[0].drop(1006);
    const d1 = clock.nextDelay!;
    expect(d1).toBeGreaterThanOrEqual(500);
    expect(d1).toBeLessThanOrEqual(1000);
    clock.advance(d1);
    expect(sockets[1].url).toContain('since=7');
    sockets[1].drop(1006);
    const d2 = clock.nextDelay!;
    expect(d2).toBeGreaterThan(d1);
    clock.advance(d2);
    sockets[2].open();
    sockets[2].drop(1011);
    expect(clock.nextDelay!).toBe(d1); // a successful open resets the backoff
  });

  it('backs off longer in a hidden tab and comes back when it is shown', () => {
    const { live, sockets, clock, env } = setup();
    live.connect();
    sockets[0].open();
    env.hidden = true;
    sockets[0].drop(1006);
    expect(clock.nextDelay!).toBeGreaterThanOrEqual(2000);
    env.hidden = false;
    env.fire('visibilitychange');
    expect(sockets).toHaveLength(2);
  });

  it('reconnects at once after a resync close, and stops after access is withdrawn', () => {
    const { live, sockets, statuses } = setup();
    live.connect();
    sockets[0].open();
    sockets[0].drop(CLOSE_RESYNC);
    expect(sockets).toHaveLength(2);
    sockets[1].open();
    sockets[1].drop(CLOSE_ACCESS_WITHDRAWN);
    expect(statuses.at(-1)).toBe('forbidden');
    expect(sockets).toHaveLength(2);
  });

  it('follows the browser offline and online events, ignoring the orphaned socket', () => {
    const { live, sockets, env, statuses } = setup();
    const got: unknown[] = [];
    live.onMessage((m) => got.push(m));
    live.connect();
    sockets[0].open();
    env.online = false;
    env.fire('offline');
    expect(statuses.at(-1)).toBe('offline');
    sockets[0].message({ type: 'leave', id: 'late', email: '', color: '' }); // orphan: ignored
    sockets[0].drop(1006); // orphan: no reconnect scheduled by it
    expect(got).toEqual([]);
    env.online = true;
    env.fire('online');
    expect(sockets).toHaveLength(2);
  });

  it('close is idempotent and stops reconnecting', () => {
    const { live, sockets, clock } = setup();
    live.connect();
    sockets[0].open();
    live.close();
    live.close();
    expect(sockets[0].closedWith).toBe(1000);
    clock.advance(60_000);
    expect(sockets).toHaveLength(1);
  });

  it('pings the server and keeps a socket that answers', () => {
    const { live, sockets, clock, statuses } = setup();
    const got: unknown[] = [];
    live.onMessage((m) => got.push(m));
    live.connect();
    sockets[0].open();
    clock.advance(25_000);
    expect(sockets[0].sent).toEqual(['{"type":"ping"}']);
    clock.advance(9_999);
    sockets[0].message({ type: 'pong' });
    expect(got).toEqual([]); // the pong is the socket's business, not its users'
    clock.advance(25_000);
    expect(sockets[0].sent).toHaveLength(2);
    clock.advance(5_000);
    sockets[0].message({ type: 'join', id: 'p', email: 'a@x', color: '#000' }); // any message proves it alive
    clock.advance(20_000);
    expect(sockets).toHaveLength(1);
    expect(statuses).toEqual(['connecting', 'online']);
  });

  it('gives up a socket that does not answer a ping and reconnects (the badge says reconnecting)', () => {
    const { live, sockets, clock, statuses, env, setSince } = setup();
    const closes: number[] = [];
    live.onClose((c) => closes.push(c));
    const got: unknown[] = [];
    live.onMessage((m) => got.push(m));
    live.connect();
    sockets[0].open();
    setSince(9);
    clock.advance(25_000 + 10_000);
    expect(sockets[0].closedWith).toBe(CLOSE_NO_PONG);
    expect(closes).toEqual([CLOSE_NO_PONG]);
    expect(statuses.at(-1)).toBe('offline');
    expect(connectionBadge(env.online, live.getStatus()).text).toBe('Reconnecting…');
    sockets[0].message({ type: 'pong' }); // too late, and from a socket we gave up
    sockets[0].drop(1006);
    expect(got).toEqual([]);
    const d = clock.nextDelay!;
    expect(d).toBeGreaterThanOrEqual(500);
    expect(d).toBeLessThanOrEqual(1000);
    clock.advance(d);
    expect(sockets).toHaveLength(2);
    expect(sockets[1].url).toContain('since=9');
    sockets[1].open();
    expect(statuses.at(-1)).toBe('online');
    expect(connectionBadge(env.online, live.getStatus()).text).toBe('Connected');
  });
});
