// SyncClient: one board's local copy, its queue of unsent edits, and the
// conversation with the server (pull, push, live changes). Plain TypeScript:
// React reads getSnapshot() and calls the edit methods.
//
// Model: the server copy (rows as the server last said, at `version`) plus
// an ordered queue of pending edits on top. What the user sees is the server
// copy with the pending edits applied. Rebase rule (docs/web-client.md): a
// row from the server replaces the server copy; an unsent local edit of the
// same row stays on top unless the server row is newer (its updatedAt is
// later than the edit's time), in which case the local edit is dropped. A
// server deletion does not drop a pending upsert: the edit brings the row
// back, as the server does for an upsert of a deleted id.
import type { BoardMeta, Changes, Note, Peer, PushBody, TrackerItem, LiveMessage } from '../api/types';
import { backoffDelay } from './backoff';
import type { LocalStore, PendingEdit, Rejection, ServerPatch } from './store';

/** The server as the sync client sees it (the API module, or a fake). */
export interface SyncTransport {
  pull(boardId: string, since: number): Promise<Changes>;
  push(boardId: string, body: PushBody, idempotencyKey: string): Promise<{ serverVersion: number }>;
}

/** Errors the transport throws: ApiError has this shape. */
interface TransportError {
  status: number;
  message: string;
  field?: string;
  retryAfter?: number;
}

/** The live channel as the sync client sees it (LiveSocket, or a fake). */
export interface LiveChannel {
  connect(): void;
  send(msg: object): boolean;
  onMessage(cb: (m: LiveMessage) => void): () => void;
  onStatus(cb: (s: 'connecting' | 'online' | 'offline' | 'forbidden') => void): () => void;
  /** onClose reports close codes (4008: resync). */
  onClose?(cb: (code: number) => void): () => void;
  close(): void;
}

export interface Clock {
  now(): number;
  setTimeout(cb: () => void, ms: number): unknown;
  clearTimeout(h: unknown): void;
  random(): number;
}

export const realClock: Clock = {
  now: () => Date.now(),
  setTimeout: (cb, ms) => setTimeout(cb, ms),
  clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
  random: Math.random,
};

/** A connection on the board, with its last pointer position. */
export interface Presence extends Peer {
  x?: number;
  y?: number;
  /** seen is when its last message arrived (clock ms). */
  seen: number;
}

export type Connection = 'connecting' | 'online' | 'offline' | 'forbidden';

/** SyncState is an immutable snapshot for the UI. */
export interface SyncState {
  /** loaded: the local copy has been read (it may still be empty). */
  loaded: boolean;
  /** synced: at least one pull (or live catch-up) has succeeded this session. */
  synced: boolean;
  version: number;
  board: BoardMeta | null;
  /** name is the board's name with a pending rename applied. */
  name: string;
  notes: ReadonlyMap<string, Note>;
  items: ReadonlyMap<string, TrackerItem>;
  /** pending counts unsent edits (rejected ones included). */
  pending: number;
  /** waiting counts the rows (and board renames) with unsent, unrefused edits: what the user calls "edits". */
  waiting: number;
  /** rejected lists edits the server refused; they are kept until discarded. */
  rejected: readonly PendingEdit[];
  connection: Connection;
  /** canEdit as the live hello said; null before it. */
  canEdit: boolean | null;
  me: Peer | null;
  peers: ReadonlyMap<string, Presence>;
  /** authLost: the session ended (401); the UI sends the user to log in. */
  authLost: boolean;
}

/**
 * LocalEdit is an edit made on this client, as the changelog sees it:
 * create and update carry the note queued, delete the note as it was.
 */
export type LocalEdit =
  | { kind: 'create' | 'update'; note: Note }
  | { kind: 'delete'; before: Note }
  | { kind: 'rename'; name: string };

/** Limits of one push (docs/sync.md). */
export const MAX_UPSERTS = 500;
export const MAX_DELETES = 5000;

export interface SyncClientOptions {
  boardId: string;
  transport: SyncTransport;
  store: LocalStore;
  /** live is optional: without it the client pulls and pushes only. */
  live?: LiveChannel;
  clock?: Clock;
  /** newKey makes idempotency keys (crypto.randomUUID in browsers). */
  newKey?: () => string;
  /**
   * waitForDrawing makes big writes to the store (a full pull) wait until
   * the UI calls drawn() (at most drawWait ms, default 3 s): structured-
   * cloning thousands of rows into IndexedDB while the board is first drawn
   * delays the drawing.
   */
  waitForDrawing?: boolean;
  drawWait?: number;
}

type Row = Note | TrackerItem;

/**
 * whenIdle resolves when the page has a quiet moment (requestIdleCallback,
 * at most a second away), or after a timer where there is none (tests).
 */
function whenIdle(clock: Clock): Promise<void> {
  const ric = (globalThis as { requestIdleCallback?: (cb: () => void, o: { timeout: number }) => number }).requestIdleCallback;
  return new Promise((resolve) => (ric ? ric(() => resolve(), { timeout: 1000 }) : clock.setTimeout(() => resolve(), 0)));
}

/** mark records a performance mark (the perf script reads them). */
const mark = (name: string) => globalThis.performance?.mark?.(name);

const later = (a: string | undefined, b: string | undefined) => (Date.parse(a ?? '') || 0) > (Date.parse(b ?? '') || 0);

export class SyncClient {
  readonly boardId: string;
  private readonly t: SyncTransport;
  private readonly store: LocalStore;
  private readonly live?: LiveChannel;
  private readonly clock: Clock;
  private readonly newKey: () => string;

  private version = 0;
  private board: BoardMeta | null = null;
  private notes = new Map<string, Note>();
  private items = new Map<string, TrackerItem>();
  private pending: PendingEdit[] = [];
  private nextSeq = 1;
  private loaded = false;
  private synced = false;
  private connection: Connection = 'offline';
  private canEdit: boolean | null = null;
  private me: Peer | null = null;
  private peers = new Map<string, Presence>();
  private authLost = false;

  private pulling: Promise<void> | null = null;
  private pullAgain = false;
  private flushing: Promise<void> | null = null;
  /** inFlight holds the seqs of the push whose answer is awaited. */
  private inFlight = new Set<number>();
  private retryTimer: unknown = null;
  private retryAttempt = 0;
  private closed = false;
  /** writes chains store writes so they land in order. */
  private writes: Promise<void> = Promise.resolve();

  private snapshot: SyncState | null = null;
  private readonly changeCbs = new Set<() => void>();
  private readonly unsubs: (() => void)[] = [];

  constructor(o: SyncClientOptions) {
    this.boardId = o.boardId;
    this.t = o.transport;
    this.store = o.store;
    this.live = o.live;
    this.clock = o.clock ?? realClock;
    this.newKey = o.newKey ?? (() => crypto.randomUUID());
    this.drawing = o.waitForDrawing
      ? new Promise<void>((resolve) => {
          this.markDrawn = resolve;
          this.clock.setTimeout(resolve, o.drawWait ?? 3000);
        })
      : Promise.resolve();
  }

  private readonly drawing: Promise<void>;
  private markDrawn: () => void = () => {};

  /** drawn tells the client the board is on screen (see waitForDrawing). */
  drawn(): void {
    this.markDrawn();
  }

  /** start reads the local copy, then pulls, pushes what waits and goes live. */
  async start(): Promise<void> {
    mark('corkboard:load-start');
    const cached = await this.store.load(this.boardId);
    if (this.closed) return;
    mark('corkboard:loaded');
    this.version = cached.version;
    this.board = cached.board;
    cached.notes.forEach((n) => this.notes.set(n.id, n));
    cached.items.forEach((i) => this.items.set(i.id, i));
    this.pending = cached.pending;
    this.localState = cached.version > 0 || cached.notes.length > 0 || cached.items.length > 0 || cached.pending.length > 0;
    // A push interrupted by a reload is sent again as the same push, with
    // the same key, so the server applies it at most once.
    this.nextSeq = this.pending.reduce((m, e) => Math.max(m, e.seq), 0) + 1;
    this.loaded = true;
    this.changed();
    if (this.live) {
      this.unsubs.push(
        this.live.onMessage((m) => this.onLive(m)),
        // 4008: we fell behind. The socket reconnects with ?since= at once;
        // a pull as well covers us if that reconnect fails.
        this.live.onClose?.((code) => {
          if (code === 4008) void this.pull();
        }) ?? (() => {}),
        this.live.onStatus((s) => {
          this.connection = s;
          if (s === 'online') {
            // The server is reachable again: no need to wait for a backoff.
            this.retryAttempt = 0;
            if (this.retryTimer !== null) {
              this.clock.clearTimeout(this.retryTimer);
              this.retryTimer = null;
            }
            this.flush();
          } else if (s !== 'connecting') {
            this.peers.clear();
          }
          this.changed();
        }),
      );
    }
    await this.pull();
    if (this.closed) return;
    this.live?.connect();
    this.flush();
  }

  /** close stops timers and the live channel; safe to call twice. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.retryTimer !== null) this.clock.clearTimeout(this.retryTimer);
    if (this.pointerTimer !== null) this.clock.clearTimeout(this.pointerTimer);
    this.unsubs.forEach((u) => u());
    this.live?.close();
    this.changeCbs.clear();
  }

  /** whenIdle resolves when pending store writes are done (tests, unload). */
  whenIdle(): Promise<void> {
    return this.writes;
  }

  private localState: boolean | null = null;

  /** hadLocalState says whether the local copy held anything when read (null before). */
  hadLocalState(): boolean | null {
    return this.localState;
  }

  /** getVersion is the version of the server copy. */
  getVersion(): number {
    return this.version;
  }

  // ---- reading ----

  onChange(cb: () => void): () => void {
    this.changeCbs.add(cb);
    return () => this.changeCbs.delete(cb);
  }

  getSnapshot = (): SyncState => {
    if (!this.snapshot) this.snapshot = this.computeSnapshot();
    return this.snapshot;
  };

  private computeSnapshot(): SyncState {
    const notes = new Map(this.notes);
    const items = new Map(this.items);
    let name = this.board?.name ?? '';
    for (const e of this.pending) {
      if (e.kind === 'board') {
        name = e.name ?? name;
        continue;
      }
      const m = (e.kind === 'note' ? notes : items) as Map<string, Row>;
      if (e.op === 'delete') m.delete(e.id);
      else if (e.row) m.set(e.id, e.row);
    }
    return {
      loaded: this.loaded,
      synced: this.synced,
      version: this.version,
      board: this.board,
      name,
      notes,
      items,
      pending: this.pending.length,
      waiting: new Set(this.pending.filter((e) => !e.rejected).map((e) => e.kind + ':' + e.id)).size,
      rejected: this.pending.filter((e) => e.rejected),
      connection: this.connection,
      canEdit: this.canEdit,
      me: this.me,
      peers: new Map(this.peers),
      authLost: this.authLost,
    };
  }

  private changed() {
    this.snapshot = null;
    this.changeCbs.forEach((cb) => cb());
  }

  // ---- editing ----

  private nowISO(): string {
    return new Date(this.clock.now()).toISOString();
  }

  private readonly editCbs = new Set<(e: LocalEdit) => void>();

  /** onLocalEdit reports every note edit and rename made here (not those of others). */
  onLocalEdit(cb: (e: LocalEdit) => void): () => void {
    this.editCbs.add(cb);
    return () => this.editCbs.delete(cb);
  }

  /** upsertNote queues a note; its updatedAt is set to now. Returns the row queued. */
  upsertNote(note: Note): Note {
    const before = this.getSnapshot().notes.get(note.id);
    const row = { ...note, updatedAt: this.nowISO() };
    delete row.version;
    delete row.deletedAt;
    this.enqueue({ kind: 'note', id: row.id, op: 'upsert', row });
    const logged = { ...row, version: before?.version ?? 0 };
    this.editCbs.forEach((cb) => cb(before ? { kind: 'update', note: logged } : { kind: 'create', note: logged }));
    return row;
  }

  deleteNote(id: string): void {
    const before = this.getSnapshot().notes.get(id);
    this.enqueue({ kind: 'note', id, op: 'delete' });
    if (before) this.editCbs.forEach((cb) => cb({ kind: 'delete', before }));
  }

  upsertItem(item: TrackerItem): TrackerItem {
    const row = { ...item, updatedAt: this.nowISO() };
    delete row.version;
    delete row.deletedAt;
    this.enqueue({ kind: 'item', id: row.id, op: 'upsert', row });
    return row;
  }

  deleteItem(id: string): void {
    this.enqueue({ kind: 'item', id, op: 'delete' });
  }

  rename(name: string): void {
    this.enqueue({ kind: 'board', id: '', op: 'upsert', name });
    this.editCbs.forEach((cb) => cb({ kind: 'rename', name }));
  }

  /** edit applies several edits at once (one change event, one store write). */
  batch(fn: () => void): void {
    this.batching++;
    try {
      fn();
    } finally {
      this.batching--;
      if (this.batching === 0) this.afterEnqueue();
    }
  }
  private batching = 0;
  private dirtyPending: PendingEdit[] = [];
  private removedSeqs: number[] = [];

  private enqueue(e: Omit<PendingEdit, 'seq' | 'at'>) {
    const edit: PendingEdit = { ...e, seq: this.nextSeq++, at: this.nowISO() };
    // Coalesce: an edit of the same row that is not yet on its way is
    // replaced, so a push never carries a row twice (and an upsert after a
    // delete of the same row is not undone by the delete in one push). A
    // refused edit of the row is replaced too: the new edit carries the
    // whole row, and is sent (and refused or not) on its own.
    const i = this.pending.findIndex((p) => p.kind === e.kind && p.id === e.id && !p.batchKey);
    if (i >= 0) {
      this.removedSeqs.push(this.pending[i].seq);
      this.pending.splice(i, 1);
    }
    this.pending.push(edit);
    this.dirtyPending.push(edit);
    if (this.batching === 0) this.afterEnqueue();
  }

  private afterEnqueue() {
    const put = this.dirtyPending;
    const del = this.removedSeqs;
    this.dirtyPending = [];
    this.removedSeqs = [];
    this.write(async () => {
      if (del.length) await this.store.deletePending(this.boardId, del);
      if (put.length) await this.store.putPending(this.boardId, put);
    });
    this.changed();
    this.flush();
  }

  /** retryRejected sends a refused edit again. */
  retryRejected(seq: number): void {
    const e = this.pending.find((p) => p.seq === seq);
    if (!e?.rejected) return;
    delete e.rejected;
    this.write(() => this.store.putPending(this.boardId, [e]));
    this.changed();
    this.flush();
  }

  /** discardRejected drops a refused edit (the user chose to). */
  discardRejected(seq: number): void {
    const i = this.pending.findIndex((p) => p.seq === seq && p.rejected);
    if (i < 0) return;
    this.pending.splice(i, 1);
    this.write(() => this.store.deletePending(this.boardId, [seq]));
    this.changed();
  }

  // ---- pulling ----

  /** pull asks for everything after the local version and applies it. */
  pull(): Promise<void> {
    if (this.pulling) {
      this.pullAgain = true;
      return this.pulling;
    }
    this.pulling = (async () => {
      do {
        this.pullAgain = false;
        const since = this.version;
        try {
          const ch = await this.t.pull(this.boardId, since);
          if (this.closed) return;
          mark('corkboard:pulled');
          this.applyChanges({ ...ch, since: ch.since ?? since });
          mark('corkboard:applied');
          this.synced = true;
          this.changed();
        } catch (err) {
          this.onTransportError(err as TransportError);
          return;
        }
      } while (this.pullAgain && !this.closed);
    })().finally(() => {
      this.pulling = null;
    });
    return this.pulling;
  }

  /**
   * applyChanges applies a pull answer or a live `changes` message, by the
   * rules of docs/live-protocol.md: a reset replaces the copy; a gap is
   * filled by a pull; what is already applied is skipped.
   */
  applyChanges(ch: Changes): void {
    if (ch.reset) {
      this.applyServerRows(ch, true);
      return;
    }
    const since = ch.since ?? this.version;
    if (since > this.version) {
      void this.pull(); // we missed something
      return;
    }
    if (ch.serverVersion <= this.version) return; // already applied
    this.applyServerRows(ch, false);
  }

  private applyServerRows(ch: Changes, reset: boolean) {
    const notes = ch.notes ?? [];
    const items = ch.trackerItems ?? [];
    const delNotes = ch.deletedNoteIds ?? [];
    const delItems = ch.deletedTrackerItemIds ?? [];
    if (reset) {
      this.notes.clear();
      this.items.clear();
    }
    notes.forEach((n) => this.notes.set(n.id, n));
    items.forEach((i) => this.items.set(i.id, i));
    delNotes.forEach((id) => this.notes.delete(id));
    delItems.forEach((id) => this.items.delete(id));
    this.version = reset ? ch.serverVersion : Math.max(this.version, ch.serverVersion);
    if (ch.board) this.board = ch.board;
    this.rebase(notes, items);
    const patch: ServerPatch = {
      version: this.version,
      board: ch.board ? ch.board : undefined,
      reset,
      putNotes: notes,
      deleteNotes: delNotes,
      putItems: items,
      deleteItems: delItems,
    };
    // A big patch (a full pull) is written once the board is drawn and the
    // page is idle: structured-cloning thousands of rows would delay the
    // first paint.
    const big = notes.length + items.length > 100;
    this.write(async () => {
      if (big) {
        await this.drawing;
        await whenIdle(this.clock);
      }
      await this.store.applyServer(this.boardId, patch);
    });
    this.changed();
  }

  /** rebase drops unsent local edits that a newer server row supersedes. */
  private rebase(notes: Note[], items: TrackerItem[]) {
    const newer = new Map<string, string>();
    notes.forEach((n) => newer.set('note:' + n.id, n.updatedAt));
    items.forEach((i) => newer.set('item:' + i.id, i.updatedAt));
    const dropped: number[] = [];
    this.pending = this.pending.filter((e) => {
      // A push on its way right now will win anyway; an edit of a failed
      // push that waits for its retry is still unsent, and is rebased.
      if (this.inFlight.has(e.seq) || e.kind === 'board') return true;
      const server = newer.get(e.kind + ':' + e.id);
      if (server !== undefined && later(server, e.at)) {
        dropped.push(e.seq);
        return false;
      }
      return true;
    });
    if (dropped.length) this.write(() => this.store.deletePending(this.boardId, dropped));
  }

  // ---- pushing ----

  /** flush pushes the queue in batches until it is empty or the network fails. */
  flush(): Promise<void> {
    if (this.flushing || this.closed || this.retryTimer !== null || this.authLost) return this.flushing ?? Promise.resolve();
    this.flushing = (async () => {
      while (!this.closed) {
        const batch = this.nextBatch();
        if (!batch) return;
        const ok = await this.pushBatch(batch);
        if (!ok) return;
      }
    })().finally(() => {
      this.flushing = null;
    });
    return this.flushing;
  }

  /**
   * nextBatch picks the next push: an interrupted batch first (same key),
   * else up to MAX_UPSERTS upserts and MAX_DELETES deletions of each kind.
   */
  private nextBatch(): { key: string; edits: PendingEdit[] } | null {
    const live = this.pending.filter((e) => !e.rejected);
    const started = live.find((e) => e.batchKey);
    if (started) {
      return { key: started.batchKey!, edits: live.filter((e) => e.batchKey === started.batchKey) };
    }
    const edits: PendingEdit[] = [];
    const count = { noteUp: 0, noteDel: 0, itemUp: 0, itemDel: 0 };
    for (const e of live) {
      if (e.kind !== 'board') {
        const k = (e.kind + (e.op === 'upsert' ? 'Up' : 'Del')) as keyof typeof count;
        const max = e.op === 'upsert' ? MAX_UPSERTS : MAX_DELETES;
        if (count[k] >= max) break; // keep the order: later edits wait for the next push
        count[k]++;
      }
      edits.push(e);
    }
    if (!edits.length) return null;
    const key = this.newKey();
    edits.forEach((e) => (e.batchKey = key));
    this.write(() => this.store.putPending(this.boardId, edits));
    return { key, edits };
  }

  private buildPush(edits: PendingEdit[]): PushBody {
    const body: PushBody = {
      clientVersion: this.version,
      notes: { upserted: [], deleted: [] },
      trackerItems: { upserted: [], deleted: [] },
    };
    for (const e of edits) {
      if (e.kind === 'board') {
        body.board = { name: e.name ?? '', updatedAt: e.at };
      } else if (e.kind === 'note') {
        if (e.op === 'upsert') body.notes.upserted.push(e.row as Note);
        else body.notes.deleted.push(e.id);
      } else {
        if (e.op === 'upsert') body.trackerItems.upserted.push(e.row as TrackerItem);
        else body.trackerItems.deleted.push(e.id);
      }
    }
    return body;
  }

  /** pushBatch sends one batch; false stops the flush loop. */
  private async pushBatch(batch: { key: string; edits: PendingEdit[] }): Promise<boolean> {
    const body = this.buildPush(batch.edits);
    let serverVersion: number;
    batch.edits.forEach((e) => this.inFlight.add(e.seq));
    try {
      ({ serverVersion } = await this.t.push(this.boardId, body, batch.key));
    } catch (err) {
      this.inFlight.clear();
      const e = err as TransportError;
      if (e.status === 400 || e.status === 403 || e.status === 413) {
        this.reject(batch, body, e);
        return true; // the rest of the queue may go
      }
      this.onTransportError(e);
      return false;
    }
    this.inFlight.clear();
    if (this.closed) return false;
    this.retryAttempt = 0;
    const seqs = new Set(batch.edits.map((e) => e.seq));
    this.pending = this.pending.filter((e) => !seqs.has(e.seq));
    this.write(() => this.store.deletePending(this.boardId, [...seqs]));
    if (serverVersion === this.version + 1) {
      // Nobody else pushed in between: our rows are the server's now.
      const at = serverVersion;
      this.applyServerRows(
        {
          serverVersion: at,
          board: body.board ? { ...(this.board ?? { id: this.boardId }), name: body.board.name, version: at, updatedAt: body.board.updatedAt } : undefined,
          notes: body.notes.upserted.map((n) => ({ ...n, version: at, deletedAt: null })),
          deletedNoteIds: body.notes.deleted,
          trackerItems: body.trackerItems.upserted.map((i) => ({ ...i, version: at, deletedAt: null })),
          deletedTrackerItemIds: body.trackerItems.deleted,
        },
        false,
      );
    } else if (serverVersion > this.version) {
      void this.pull();
    }
    this.changed();
    return true;
  }

  /**
   * reject marks what the server refused. A 400 naming a row
   * (notes.upserted[3].content) marks that edit and lets the others go again
   * in a new push; anything else marks the whole batch.
   */
  private reject(batch: { edits: PendingEdit[] }, body: PushBody, e: TransportError) {
    const why: Rejection = { status: e.status, message: e.message, field: e.field };
    let culprits = batch.edits;
    const m = e.status === 400 && e.field ? /^(notes|trackerItems)\.(upserted|deleted)\[(\d+)\]/.exec(e.field) : null;
    if (m) {
      const list = m[1] === 'notes' ? body.notes : body.trackerItems;
      const id = m[2] === 'upserted' ? (list.upserted[Number(m[3])] as Row | undefined)?.id : list.deleted[Number(m[3])];
      const kind = m[1] === 'notes' ? 'note' : 'item';
      const hit = batch.edits.find((x) => x.kind === kind && x.id === id && x.op === m[2].replace('upserted', 'upsert').replace('deleted', 'delete'));
      if (hit) culprits = [hit];
    } else if (e.status === 400 && e.field?.startsWith('board')) {
      culprits = batch.edits.filter((x) => x.kind === 'board');
      if (!culprits.length) culprits = batch.edits;
    }
    for (const x of batch.edits) {
      delete x.batchKey; // the push was refused: nothing of it was applied
      if (culprits.includes(x)) x.rejected = why;
    }
    this.write(() => this.store.putPending(this.boardId, batch.edits));
    this.changed();
  }

  private onTransportError(e: TransportError) {
    if (e.status === 401) {
      this.authLost = true;
      this.changed();
      return;
    }
    // Offline, 5xx, 429: try again later with the same key.
    if (this.retryTimer !== null || this.closed) return;
    let delay = backoffDelay(this.retryAttempt++, { random: this.clock.random });
    if (e.retryAfter) delay = Math.max(delay, e.retryAfter * 1000);
    this.retryTimer = this.clock.setTimeout(() => {
      this.retryTimer = null;
      void this.pull().then(() => this.flush());
    }, delay);
  }

  // ---- live ----

  private onLive(m: LiveMessage) {
    const now = this.clock.now();
    switch (m.type) {
      case 'hello':
        this.me = { id: m.you.id, email: m.you.email, color: m.you.color };
        this.canEdit = m.you.canEdit;
        this.peers = new Map(m.present.map((p) => [p.id, { ...p, seen: now }]));
        // Changes after our version follow as one `changes` message; if
        // the server is at our version, we are up to date.
        if (m.serverVersion === this.version) this.synced = true;
        this.changed();
        break;
      case 'changes':
        this.applyChanges(m);
        break;
      case 'join':
        this.peers.set(m.id, { id: m.id, email: m.email, color: m.color, seen: now });
        this.changed();
        break;
      case 'leave':
        this.peers.delete(m.id);
        this.changed();
        break;
      case 'pointer':
        this.peers.set(m.id, { id: m.id, email: m.email, color: m.color, x: m.x, y: m.y, seen: now });
        this.changed();
        break;
    }
  }

  private lastPointer = 0;
  private pointerTimer: unknown = null;
  private nextPointer: { x: number; y: number } | null = null;

  /** sendPointer shares the pointer (board coordinates), at most 20 a second. */
  sendPointer(x: number, y: number): void {
    this.nextPointer = { x, y };
    if (this.pointerTimer !== null) return;
    const wait = Math.max(0, this.lastPointer + 50 - this.clock.now());
    this.pointerTimer = this.clock.setTimeout(() => {
      this.pointerTimer = null;
      this.lastPointer = this.clock.now();
      const p = this.nextPointer;
      this.nextPointer = null;
      if (p && this.live) this.live.send({ type: 'pointer', x: p.x, y: p.y });
    }, wait);
  }

  private write(fn: () => Promise<void>) {
    this.writes = this.writes.then(fn).catch((err) => {
      console.error('corkboard: local store write failed', err);
    });
  }
}
