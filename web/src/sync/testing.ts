// Fakes for the sync engine's tests: a server transport, a clock with
// manual timers, a live channel and a WebSocket.
import type { Changes, Connector, Frame, LiveEvent, LiveMessage, Note, PushBody, TrackerItem } from '../api/types';
import { mergeRow, type Kind, type Row } from './merge';
import type { Clock, LiveChannel, SyncTransport } from './client';
import type { SocketLike, Environment } from './socket';

export class FakeClock implements Clock {
  t = Date.parse('2026-11-23T10:00:00Z');
  private timers = new Map<number, { at: number; cb: () => void }>();
  private next = 1;
  now = () => this.t;
  random = () => 0.5;
  setTimeout = (cb: () => void, ms: number) => {
    const id = this.next++;
    this.timers.set(id, { at: this.t + ms, cb });
    return id;
  };
  clearTimeout = (h: unknown) => {
    this.timers.delete(h as number);
  };
  /** pendingTimers is how many timers wait. */
  get pendingTimers() {
    return this.timers.size;
  }
  /** nextDelay is the wait until the earliest timer. */
  get nextDelay(): number | undefined {
    const ats = [...this.timers.values()].map((t) => t.at);
    return ats.length ? Math.min(...ats) - this.t : undefined;
  }
  /** advance moves time on, firing due timers in order. */
  advance(ms: number) {
    const end = this.t + ms;
    for (;;) {
      const due = [...this.timers.entries()].filter(([, t]) => t.at <= end).sort((a, b) => a[1].at - b[1].at)[0];
      if (!due) break;
      this.timers.delete(due[0]);
      this.t = due[1].at;
      due[1].cb();
    }
    this.t = end;
  }
}

/** An error as ApiError carries it. */
export const httpError = (status: number, message = 'refused', field?: string, retryAfter?: number) =>
  Object.assign(new Error(message), { status, field, retryAfter });

export interface PushCall {
  body: PushBody;
  key: string;
}

/**
 * FakeServer is a tiny in-memory board server: pushes apply and bump the
 * version (replayed keys apply nothing and answer replayed: true), pulls
 * answer rows above `since`. A pushed row with baseVersion is merged into
 * the stored row against the row as it was at baseVersion (mergeNote /
 * mergeItem, as the Go server does); without it the row is replaced.
 * `events` collects what the merges did (overlap, revived), as live
 * `changes` messages carry it. `fail` makes the next calls throw.
 */
export class FakeServer implements SyncTransport {
  version = 0;
  rows = new Map<string, Note & { version: number }>();
  items = new Map<string, TrackerItem & { version: number }>();
  deleted = new Map<string, number>();
  deletedItems = new Map<string, number>();
  connectors = new Map<string, Connector & { version: number }>();
  frames = new Map<string, Frame & { version: number }>();
  deletedConnectors = new Map<string, number>();
  deletedFrames = new Map<string, number>();
  /** history keeps every version of every row ("note:n1" → rows, oldest first), for merges. */
  history = new Map<string, Row[]>();
  keys = new Map<string, number>();
  pushes: PushCall[] = [];
  pulls: number[] = [];
  failPush: unknown[] = [];
  failPull: unknown[] = [];
  offline = false;
  /** events are what the merges of each version did, by version. */
  events = new Map<number, LiveEvent[]>();

  async pull(_boardId: string, since: number): Promise<Changes> {
    this.pulls.push(since);
    if (this.offline) throw httpError(0, 'offline');
    const f = this.failPull.shift();
    if (f) throw f;
    return this.changesSince(since);
  }

  /** changesSince is a pull answer (and the body of a live catch-up). */
  changesSince(since: number): Changes {
    if (since === this.version) return { serverVersion: this.version };
    return {
      notes: [...this.rows.values()].filter((r) => r.version > since),
      deletedNoteIds: since === 0 ? [] : [...this.deleted.entries()].filter(([, v]) => v > since).map(([id]) => id),
      trackerItems: [...this.items.values()].filter((r) => r.version > since),
      deletedTrackerItemIds: since === 0 ? [] : [...this.deletedItems.entries()].filter(([, v]) => v > since).map(([id]) => id),
      connectors: [...this.connectors.values()].filter((r) => r.version > since),
      deletedConnectorIds: since === 0 ? [] : [...this.deletedConnectors.entries()].filter(([, v]) => v > since).map(([id]) => id),
      frames: [...this.frames.values()].filter((r) => r.version > since),
      deletedFrameIds: since === 0 ? [] : [...this.deletedFrames.entries()].filter(([, v]) => v > since).map(([id]) => id),
      serverVersion: this.version,
    };
  }

  async push(_boardId: string, body: PushBody, key: string): Promise<{ serverVersion: number; replayed?: boolean }> {
    this.pushes.push({ body: structuredClone(body), key });
    if (this.offline) throw httpError(0, 'offline');
    const f = this.failPush.shift();
    if (f) throw f;
    const replay = this.keys.get(key);
    if (replay !== undefined) return { serverVersion: replay, replayed: true };
    this.apply(body);
    this.keys.set(key, this.version);
    return { serverVersion: this.version };
  }

  /** apply is a push by someone else (or us). */
  apply(body: { notes: PushBody['notes']; trackerItems?: PushBody['trackerItems']; connectors?: PushBody['connectors']; frames?: PushBody['frames'] }) {
    this.version++;
    const v = this.version;
    const events: LiveEvent[] = [];
    const upsert = <R extends Row>(table: Kind, rows: Map<string, R & { version: number }>, deleted: Map<string, number>, r: R) => {
      const cur = rows.get(r.id);
      const past = this.history.get(table + ':' + r.id) ?? [];
      const base = r.baseVersion ? past.filter((p) => (p.version ?? 0) <= r.baseVersion!).at(-1) : undefined;
      let row = { ...r } as R;
      delete row.baseVersion;
      if (cur && base) {
        const m = mergeRow(table, base, cur, r);
        row = m.merged as R;
        if (m.overlap) events.push({ kind: 'overlap', table: table as 'note' | 'item', id: r.id, version: cur.version, logKey: `log/${cur.version}-${r.id}` });
      } else if (!cur && r.baseVersion && deleted.has(r.id)) {
        events.push({ kind: 'revived', table: table as 'note' | 'item', id: r.id, version: deleted.get(r.id)! });
      }
      const stored = { ...row, version: v, deletedAt: null } as R & { version: number };
      rows.set(r.id, stored);
      deleted.delete(r.id);
      this.history.set(table + ':' + r.id, [...past, stored]);
    };
    for (const n of body.notes.upserted) upsert('note', this.rows, this.deleted, n);
    for (const i of body.trackerItems?.upserted ?? []) upsert('item', this.items, this.deletedItems, i);
    for (const id of body.notes.deleted) {
      if (this.rows.delete(id)) this.deleted.set(id, v);
    }
    for (const id of body.trackerItems?.deleted ?? []) {
      if (this.items.delete(id)) this.deletedItems.set(id, v);
    }
    for (const c of body.connectors?.upserted ?? []) upsert('connector', this.connectors, this.deletedConnectors, c);
    for (const f of body.frames?.upserted ?? []) upsert('frame', this.frames, this.deletedFrames, f);
    for (const id of body.connectors?.deleted ?? []) if (this.connectors.delete(id)) this.deletedConnectors.set(id, v);
    for (const id of body.frames?.deleted ?? []) if (this.frames.delete(id)) this.deletedFrames.set(id, v);
    if (events.length) this.events.set(v, events);
  }

  /** liveChanges is the live `changes` message of version v (with its events), as the server would send it. */
  liveChanges(v = this.version): Extract<LiveMessage, { type: 'changes' }> {
    const ch = this.changesSince(v - 1);
    return { type: 'changes', since: v - 1, ...ch, notes: (ch.notes ?? []).filter((r) => r.version === v), trackerItems: (ch.trackerItems ?? []).filter((r) => r.version === v), connectors: (ch.connectors ?? []).filter((r) => r.version === v), frames: (ch.frames ?? []).filter((r) => r.version === v), events: this.events.get(v) };
  }
}

export class FakeLive implements LiveChannel {
  connected = 0;
  sent: object[] = [];
  private msgCbs = new Set<(m: LiveMessage) => void>();
  private statusCbs = new Set<(s: 'connecting' | 'online' | 'offline' | 'forbidden') => void>();
  connect() {
    this.connected++;
  }
  send(m: object) {
    this.sent.push(m);
    return true;
  }
  onMessage(cb: (m: LiveMessage) => void) {
    this.msgCbs.add(cb);
    return () => this.msgCbs.delete(cb);
  }
  onStatus(cb: (s: 'connecting' | 'online' | 'offline' | 'forbidden') => void) {
    this.statusCbs.add(cb);
    return () => this.statusCbs.delete(cb);
  }
  private closeCbs = new Set<(code: number) => void>();
  onClose(cb: (code: number) => void) {
    this.closeCbs.add(cb);
    return () => this.closeCbs.delete(cb);
  }
  closeWith(code: number) {
    this.closeCbs.forEach((cb) => cb(code));
  }
  close() {}
  emit(m: LiveMessage) {
    this.msgCbs.forEach((cb) => cb(m));
  }
  status(s: 'connecting' | 'online' | 'offline' | 'forbidden') {
    this.statusCbs.forEach((cb) => cb(s));
  }
}

export class FakeSocket implements SocketLike {
  readyState = 0;
  sent: string[] = [];
  closedWith: number | undefined;
  onopen: ((ev: unknown) => void) | null = null;
  onmessage: ((ev: { data: unknown }) => void) | null = null;
  onclose: ((ev: { code: number; reason: string }) => void) | null = null;
  onerror: ((ev: unknown) => void) | null = null;
  constructor(readonly url: string) {}
  send(d: string) {
    this.sent.push(d);
  }
  close(code?: number) {
    this.closedWith = code;
    this.readyState = 3;
  }
  // Server side of the fake:
  open() {
    this.readyState = 1;
    this.onopen?.({});
  }
  message(m: object) {
    this.onmessage?.({ data: JSON.stringify(m) });
  }
  drop(code: number) {
    this.readyState = 3;
    this.onclose?.({ code, reason: '' });
  }
}

export class FakeEnv implements Environment {
  online = true;
  hidden = false;
  private cbs = new Map<string, Set<() => void>>();
  constructor(private readonly clock: FakeClock) {}
  isOnline = () => this.online;
  isHidden = () => this.hidden;
  on(event: string, cb: () => void) {
    if (!this.cbs.has(event)) this.cbs.set(event, new Set());
    this.cbs.get(event)!.add(cb);
    return () => this.cbs.get(event)!.delete(cb);
  }
  fire(event: string) {
    this.cbs.get(event)?.forEach((cb) => cb());
  }
  setTimeout = (cb: () => void, ms: number) => this.clock.setTimeout(cb, ms);
  clearTimeout = (h: unknown) => this.clock.clearTimeout(h);
  random = () => 0.5;
}

/** note makes a note row. */
export const note = (id: string, extra: Partial<Note> = {}): Note => ({
  id,
  title: id,
  content: '',
  x: 0,
  y: 0,
  color: 'yellow',
  type: 'sticky',
  updatedAt: '',
  ...extra,
});

/** connector makes a connector row from one note (or frame) to another. */
export const connector = (id: string, from: string, to: string, extra: Partial<Connector> = {}): Connector => ({ id, from, to, label: '', style: 'arrow', dash: 'solid', color: 'gray', updatedAt: '', ...extra });

/** frame makes a frame row. */
export const frame = (id: string, extra: Partial<Frame> = {}): Frame => ({ id, title: id, x: 0, y: 0, w: 600, h: 400, color: 'gray', locked: false, updatedAt: '', ...extra });

/** settle lets pending promises run. */
export const settle = async () => {
  for (let i = 0; i < 20; i++) await Promise.resolve();
  await new Promise((r) => setTimeout(r, 0));
};
