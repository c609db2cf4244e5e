// SyncClient: one board's local copy and the conversation with the server
// (pull, push, live changes). Plain TypeScript: React reads getSnapshot()
// and calls the edit methods. The rules live in small pure modules:
// pending.ts (the queue of unsent edits, merged on top of the server copy),
// merge.ts (the merge, shared with the server through golden vectors),
// presence.ts (peers, pointers, who is editing: a store of its own),
// marks.ts (what merges did to my changes).
//
// Model: the server copy (rows as the server last said, at `version`) plus
// the queue of unsent edits on top. What the user sees for a row is the
// server row with its unsent edits merged on top (docs/web-client.md, "The
// merge rule").
import type { BoardMeta, Changes, Connector, Frame, LiveMessage, Note, PushBody, Role, TrackerItem } from '../api/types';
import { backoffDelay } from './backoff';
import { MarkBook, type Mark, type SavedMarks, type Table } from './marks';
import type { Row } from './merge';
import { Notifier, type FrameScheduler } from './notify';
import { PendingQueue, ROW_KINDS, WIRE, strip, type Batch, type NewEdit, type RowKind, type ServerCopy } from './pending';
import { PresenceStore } from './presence';
import type { LocalStore, PendingEdit } from './store';

export { MAX_DELETES, MAX_UPSERTS } from './pending';
export type { Mark } from './marks';
export type { Presence, PresenceState } from './presence';

/** PushAnswer is the answer to a push: replayed when its idempotency key had been applied before. */
export interface PushAnswer {
  serverVersion: number;
  replayed?: boolean;
}

/** The server as the sync client sees it (the API module, or a fake). */
export interface SyncTransport {
  pull(boardId: string, since: number): Promise<Changes>;
  push(boardId: string, body: PushBody, idempotencyKey: string): Promise<PushAnswer>;
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

export type Connection = 'connecting' | 'online' | 'offline' | 'forbidden';

/** SyncState is an immutable snapshot of the board for the UI (presence has its own: SyncClient.presence). */
export interface SyncState {
  /** loaded: the local copy has been read (it may still be empty). */
  loaded: boolean;
  /** synced: at least one pull (or live catch-up) has succeeded this session. */
  synced: boolean;
  version: number;
  board: BoardMeta | null;
  /** name is the board's name with a pending rename applied. */
  name: string;
  /** notes and items are the server copy with the unsent edits merged on top. */
  notes: ReadonlyMap<string, Note>;
  items: ReadonlyMap<string, TrackerItem>;
  /** connectors and frames (issue 24), the same way. */
  connectors: ReadonlyMap<string, Connector>;
  frames: ReadonlyMap<string, Frame>;
  /** pending counts unsent edits (rejected ones included). */
  pending: number;
  /** waiting counts the rows (and board renames) with unsent, unrefused edits: what the user calls "edits". */
  waiting: number;
  /** rejected lists edits the server refused; they are kept until discarded. */
  rejected: readonly PendingEdit[];
  connection: Connection;
  /** canEdit as the live hello said, or a later `access` message (a plan change); null before either. */
  canEdit: boolean | null;
  /** role as the live hello or a later `access` message said (docs/api.md, "Locks and roles"); null before either. */
  role: Role | null;
  /** undone lists edits the server refused for a lock or a role: dropped (the row shows the server's copy), told until dismissed. */
  undone: readonly Undone[];
  /** authLost: the session ended (401); the UI sends the user to log in. */
  authLost: boolean;
  /** marks: what merges did to my changes, until dismissed (the same array as marks()). */
  marks: readonly Mark[];
}

/** Undone is an edit the server refused for who may change its row: it was dropped, and the person is told why. */
export interface Undone {
  seq: number;
  kind: PendingEdit['kind'];
  op: PendingEdit['op'];
  id: string;
  title: string;
  message: string;
}

/**
 * LocalEdit is an edit made on this client, as the changelog sees it:
 * create and update carry the note queued, delete the note as it was.
 */
export type LocalEdit =
  | { kind: 'create' | 'update'; note: Note }
  | { kind: 'delete'; before: Note }
  | { kind: 'rename'; name: string };

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
  /** frame schedules change notifications (default: the next animation frame). */
  frame?: FrameScheduler;
}

/** marksKey is where a board's marks and my recent versions are kept (LocalStore values). */
export const marksKey = (boardId: string) => `marks:${boardId}`;

/**
 * whenIdle resolves when the page has a quiet moment (requestIdleCallback,
 * at most a second away), or after a timer where there is none (tests).
 */
function whenIdle(clock: Clock): Promise<void> {
  const ric = (globalThis as { requestIdleCallback?: (cb: () => void, o: { timeout: number }) => number }).requestIdleCallback;
  return new Promise((resolve) => (ric ? ric(() => resolve(), { timeout: 1000 }) : clock.setTimeout(() => resolve(), 0)));
}

/** mark records a performance mark (the perf script reads them). */
const perfMark = (name: string) => globalThis.performance?.mark?.(name);

export class SyncClient {
  readonly boardId: string;
  /** presence: who is here, their pointers and editors (its own snapshot and subscription). */
  readonly presence: PresenceStore;
  private readonly t: SyncTransport;
  private readonly store: LocalStore;
  private readonly live?: LiveChannel;
  private readonly clock: Clock;
  private readonly newKey: () => string;

  private version = 0;
  private board: BoardMeta | null = null;
  private readonly notes = new Map<string, Note>();
  private readonly items = new Map<string, TrackerItem>();
  private readonly connectors = new Map<string, Connector>();
  private readonly frames = new Map<string, Frame>();
  /** rows is each kind's server copy. */
  private readonly rows: Record<RowKind, Map<string, Row>> = { note: this.notes, item: this.items, connector: this.connectors, frame: this.frames };
  private readonly queue = new PendingQueue();
  private book = new MarkBook();
  private loaded = false;
  private synced = false;
  private connection: Connection = 'offline';
  private canEdit: boolean | null = null;
  private role: Role | null = null;
  private undone: Undone[] = [];
  private authLost = false;

  private pulling: Promise<void> | null = null;
  private pullAgain = false;
  private flushing: Promise<void> | null = null;
  private retryTimer: unknown = null;
  private retryAttempt = 0;
  private closed = false;
  /** writes chains store writes so they land in order. */
  private writes: Promise<void> = Promise.resolve();

  private snapshot: SyncState | null = null;
  private readonly notifier: Notifier;
  private readonly unsubs: (() => void)[] = [];

  /** server is the server copy as the queue reads it. */
  private readonly server: ServerCopy = ((c: SyncClient) => ({
    row: (kind: RowKind, id: string) => c.rows[kind].get(id),
    get version() {
      return c.version;
    },
  }))(this);

  constructor(o: SyncClientOptions) {
    this.boardId = o.boardId;
    this.t = o.transport;
    this.store = o.store;
    this.live = o.live;
    this.clock = o.clock ?? realClock;
    this.newKey = o.newKey ?? (() => crypto.randomUUID());
    this.notifier = new Notifier(o.frame);
    this.presence = new PresenceStore({ send: (m) => this.live?.send(m) ?? false, clock: this.clock, frame: o.frame });
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
    perfMark('corkboard:load-start');
    const [cached, saved] = await Promise.all([this.store.load(this.boardId), this.store.getValue<SavedMarks>(marksKey(this.boardId)).catch(() => undefined)]);
    if (this.closed) return;
    perfMark('corkboard:loaded');
    this.version = cached.version;
    this.board = cached.board;
    cached.notes.forEach((n) => this.notes.set(n.id, n));
    cached.items.forEach((i) => this.items.set(i.id, i));
    cached.connectors.forEach((c) => this.connectors.set(c.id, c));
    cached.frames.forEach((f) => this.frames.set(f.id, f));
    // A push interrupted by a reload is sent again as the same push, with
    // the same key, so the server applies it at most once.
    this.queue.load(cached.pending);
    this.queue.rebase([], this.server); // edits whose wait is over (see load)
    this.persistQueue();
    this.book = new MarkBook(saved);
    this.localState = cached.version > 0 || cached.notes.length > 0 || cached.items.length > 0 || cached.pending.length > 0;
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
          this.presence.connection(s);
          if (s === 'online') {
            // The server is reachable again: no need to wait for a backoff.
            this.retryAttempt = 0;
            if (this.retryTimer !== null) {
              this.clock.clearTimeout(this.retryTimer);
              this.retryTimer = null;
            }
            this.flush();
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

  /** close stops timers, notifications and the live channel; safe to call twice. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.retryTimer !== null) this.clock.clearTimeout(this.retryTimer);
    this.unsubs.forEach((u) => u());
    this.live?.close();
    this.notifier.close();
    this.presence.close();
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

  /** onChange tells cb that the board changed, at most once per animation frame; returns the unsubscribe. */
  onChange(cb: () => void): () => void {
    return this.notifier.subscribe(cb);
  }

  /** getSnapshot is the board as shown (always current; a new object after each change). */
  getSnapshot = (): SyncState => {
    if (!this.snapshot) this.snapshot = this.computeSnapshot();
    return this.snapshot;
  };

  private computeSnapshot(): SyncState {
    const notes = new Map(this.notes);
    const items = new Map(this.items);
    const connectors = new Map(this.connectors);
    const frames = new Map(this.frames);
    const name = this.queue.overlay({ note: notes, item: items, connector: connectors, frame: frames } as Record<RowKind, Map<string, Row>>, this.board?.name ?? '', this.server);
    return {
      loaded: this.loaded,
      synced: this.synced,
      version: this.version,
      board: this.board,
      name,
      notes,
      items,
      connectors,
      frames,
      pending: this.queue.size,
      waiting: this.queue.waitingRows(),
      rejected: this.queue.rejected(),
      connection: this.connection,
      canEdit: this.canEdit,
      role: this.role,
      undone: this.undone,
      authLost: this.authLost,
      marks: this.book.marks(),
    };
  }

  private changed() {
    this.snapshot = null;
    this.notifier.notify();
  }

  /** shown is one row as the user sees it, without building a whole snapshot. */
  private shown(kind: RowKind, id: string): Row | undefined {
    return this.queue.row(kind, id, this.server);
  }

  // ---- marks ----

  /** marks lists what merges did to my changes (overlap: my lines were overwritten; revived: a note I deleted came back), until dismissed. */
  marks(): readonly Mark[] {
    return this.book.marks();
  }

  /** dismissMark drops the marks of a row (the user has seen them). */
  dismissMark(id: string, table: Table = 'note'): void {
    if (!this.book.dismiss(id, table)) return;
    this.saveMarks();
    this.changed();
  }

  /** saveMarks writes the marks and my recent versions, once for all the changes queued before the write. */
  private saveMarks() {
    if (this.marksDirty) return;
    this.marksDirty = true;
    this.write(() => {
      this.marksDirty = false;
      return this.store.setValue(marksKey(this.boardId), this.book.save());
    });
  }
  private marksDirty = false;

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

  /**
   * upsertNote queues a note, the whole row as the user now has it; its
   * updatedAt is set to now. It is pushed with the version of the server
   * copy it was made on, and merged into what others did meanwhile.
   * base is the row as the server had it when the edit began, for an edit
   * made over time (the note editor): the push is then merged against it,
   * so lines others changed since are kept (default: the copy now).
   * Returns the row queued.
   */
  upsertNote(note: Note, base?: Note): Note {
    const before = this.shown('note', note.id) as Note | undefined;
    const row = strip({ ...note, updatedAt: this.nowISO() });
    this.enqueue({ kind: 'note', id: row.id, op: 'upsert', row }, before, base);
    const logged = { ...row, version: before?.version ?? 0 };
    this.editCbs.forEach((cb) => cb(before ? { kind: 'update', note: logged } : { kind: 'create', note: logged }));
    return row;
  }

  deleteNote(id: string): void {
    const before = this.shown('note', id) as Note | undefined;
    this.enqueue({ kind: 'note', id, op: 'delete' }, before);
    if (before) this.editCbs.forEach((cb) => cb({ kind: 'delete', before }));
  }

  /** upsertItem queues a tracker item; base as for upsertNote (the work item form). */
  upsertItem(item: TrackerItem, base?: TrackerItem): TrackerItem {
    const before = this.shown('item', item.id);
    const row = strip({ ...item, updatedAt: this.nowISO() });
    this.enqueue({ kind: 'item', id: row.id, op: 'upsert', row }, before, base);
    return row;
  }

  deleteItem(id: string): void {
    this.enqueue({ kind: 'item', id, op: 'delete' }, this.shown('item', id));
  }

  /** upsertConnector queues a connector, the whole row; base as for upsertNote. */
  upsertConnector(c: Connector, base?: Connector): Connector {
    return this.upsertRow('connector', c, base);
  }

  deleteConnector(id: string): void {
    this.enqueue({ kind: 'connector', id, op: 'delete' }, this.shown('connector', id));
  }

  /** upsertFrame queues a frame, the whole row; base as for upsertNote. */
  upsertFrame(f: Frame, base?: Frame): Frame {
    return this.upsertRow('frame', f, base);
  }

  deleteFrame(id: string): void {
    this.enqueue({ kind: 'frame', id, op: 'delete' }, this.shown('frame', id));
  }

  private upsertRow<T extends Row>(kind: RowKind, r: T, base?: T): T {
    const row = strip({ ...r, updatedAt: this.nowISO() });
    this.enqueue({ kind, id: row.id, op: 'upsert', row }, this.shown(kind, row.id), base);
    return row;
  }

  rename(name: string): void {
    this.enqueue({ kind: 'board', id: '', op: 'upsert', name }, undefined);
    this.editCbs.forEach((cb) => cb({ kind: 'rename', name }));
  }

  /** batch applies several edits at once (one change event, one store write). */
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

  private enqueue(e: NewEdit, shown: Row | undefined, base?: Row) {
    this.queue.add(e, this.nowISO(), this.server, shown, base);
    if (this.batching === 0) this.afterEnqueue();
  }

  private afterEnqueue() {
    this.persistQueue();
    this.changed();
    this.flush();
  }

  /** persistQueue writes what changed in the queue to the local store. */
  private persistQueue() {
    const { put, del } = this.queue.takeWrites();
    if (!put.length && !del.length) return;
    this.write(async () => {
      if (del.length) await this.store.deletePending(this.boardId, del);
      if (put.length) await this.store.putPending(this.boardId, put);
    });
  }

  /** retryRejected sends a refused edit again. */
  retryRejected(seq: number): void {
    if (!this.queue.retry(seq)) return;
    this.persistQueue();
    this.changed();
    this.flush();
  }

  /** dismissUndone forgets the notice of an edit dropped for a lock or a role. */
  dismissUndone(seq: number): void {
    const before = this.undone.length;
    this.undone = this.undone.filter((u) => u.seq !== seq);
    if (this.undone.length !== before) this.changed();
  }

  /** discardRejected drops a refused edit (the user chose to). */
  discardRejected(seq: number): void {
    if (!this.queue.discard(seq)) return;
    this.persistQueue();
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
          perfMark('corkboard:pulled');
          this.applyChanges({ ...ch, since: ch.since ?? since });
          perfMark('corkboard:applied');
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
    const put = (k: RowKind) => (ch[WIRE[k].list] ?? []) as Row[];
    const del = (k: RowKind) => ch[WIRE[k].deleted] ?? [];
    for (const k of ROW_KINDS) {
      const m = this.rows[k];
      if (reset) m.clear();
      put(k).forEach((r) => m.set(r.id, r));
      del(k).forEach((id) => m.delete(id));
    }
    const notes = put('note') as Note[];
    const items = put('item') as TrackerItem[];
    this.version = reset ? ch.serverVersion : Math.max(this.version, ch.serverVersion);
    if (ch.board) this.board = ch.board;
    // Unsent edits of the rows that changed are merged onto them.
    const rows: { kind: RowKind; row: Row }[] = [];
    for (const k of ROW_KINDS) put(k).forEach((row) => rows.push({ kind: k, row }));
    this.queue.rebase(rows, this.server);
    this.persistQueue();
    const patch = {
      version: this.version,
      board: ch.board ? ch.board : undefined,
      reset,
      putNotes: notes,
      deleteNotes: del('note'),
      putItems: items,
      deleteItems: del('item'),
      putConnectors: put('connector') as Connector[],
      deleteConnectors: del('connector'),
      putFrames: put('frame') as Frame[],
      deleteFrames: del('frame'),
    };
    // A big patch (a full pull) is written once the board is drawn and the
    // page is idle: structured-cloning thousands of rows would delay the
    // first paint.
    const big = rows.length > 100;
    this.write(async () => {
      if (big) {
        await this.drawing;
        await whenIdle(this.clock);
      }
      await this.store.applyServer(this.boardId, patch);
    });
    this.changed();
    // Edits that waited for one of these rows may go now.
    if (this.loaded) this.flush();
  }

  // ---- pushing ----

  /** flush pushes the queue in batches until it is empty or the network fails. */
  flush(): Promise<void> {
    if (this.flushing || this.closed || this.retryTimer !== null || this.authLost) return this.flushing ?? Promise.resolve();
    this.flushing = (async () => {
      while (!this.closed) {
        const batch = this.queue.nextBatch(this.newKey);
        if (!batch) return;
        this.persistQueue(); // the batch's key, so a reload sends the same push
        const ok = await this.pushBatch(batch);
        if (!ok) return;
      }
    })().finally(() => {
      this.flushing = null;
    });
    return this.flushing;
  }

  /** pushBatch sends one batch; false stops the flush loop. */
  private async pushBatch(batch: Batch): Promise<boolean> {
    const body = this.queue.buildPush(batch, this.version);
    this.queue.sending(batch);
    let answer: PushAnswer;
    try {
      answer = await this.t.push(this.boardId, body, batch.key);
    } catch (err) {
      const e = err as TransportError;
      if (e.status === 400 || e.status === 403 || e.status === 413) {
        const dropped = this.queue.reject(batch, body, e);
        this.persistQueue();
        if (dropped.length) {
          // A lock or a role: not retried, the row goes back to the
          // server's copy, and a pull brings what changed it (the lock).
          const row = (x: PendingEdit) => (x.row as { title?: string; key?: string } | undefined) ?? {};
          this.undone = [...this.undone, ...dropped.map((x) => ({ seq: x.seq, kind: x.kind, op: x.op, id: x.id, title: row(x).title ?? row(x).key ?? '', message: e.message }))];
          void this.pull();
        }
        this.changed();
        return true; // the rest of the queue may go
      }
      this.queue.unanswered(batch);
      this.onTransportError(e);
      return false;
    }
    if (this.closed) return false;
    this.retryAttempt = 0;
    const at = answer.serverVersion;
    // Remember that this version is mine, for the events about it.
    const mine = batch.edits.filter((e) => e.kind === 'note' || e.kind === 'item').map((e) => ({ table: e.kind as Table, id: e.id }));
    this.book.recordPush(at, mine);
    this.saveMarks();
    const rows = this.queue.acked(batch, body, at, this.server, answer.replayed);
    this.persistQueue();
    if (rows) {
      // Nobody else pushed in between: the rows the server stored are ours,
      // merged the way the server merged them.
      if (body.board) rows.board = { ...(this.board ?? { id: this.boardId }), name: body.board.name, version: at, updatedAt: body.board.updatedAt };
      this.applyServerRows(rows, false);
    } else if (at > this.version) {
      void this.pull();
    }
    this.changed();
    return true;
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
    switch (m.type) {
      case 'hello':
        this.canEdit = m.you.canEdit;
        this.role = m.you.role ?? null;
        // Changes after our version follow as one `changes` message; if
        // the server is at our version, we are up to date.
        if (m.serverVersion === this.version) this.synced = true;
        this.presence.handle(m);
        this.changed();
        break;
      case 'changes':
        // Events first: they are about versions already applied, and the
        // rows may be skipped (our own push, applied from its answer).
        if (m.events?.length && this.book.onEvents(m.events)) {
          this.saveMarks();
          this.changed();
        }
        this.applyChanges(m);
        break;
      case 'access':
        // A plan change: the board turns editable, or view only, without
        // a reload (docs/live-protocol.md, "access").
        {
          // A plan change to an invitee whose role is edit leaves role out: edit or view, as canEdit says.
          const role = m.role ?? (m.canEdit ? 'edit' : 'view');
          if (this.canEdit !== m.canEdit || role !== this.role) {
            this.canEdit = m.canEdit;
            this.role = role;
            this.changed();
          }
        }
        break;
      case 'events':
        if (m.events?.length && this.book.onEvents(m.events)) {
          this.saveMarks();
          this.changed();
        }
        break;
      default:
        this.presence.handle(m);
    }
  }

  private write(fn: () => Promise<void>) {
    this.writes = this.writes.then(fn).catch((err) => {
      console.error('corkboard: local store write failed', err);
    });
  }
}
