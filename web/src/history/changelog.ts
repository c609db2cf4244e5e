// ChangelogClient: the spec's client-side changelog rules for one board
// (spec: Changelog and snapshots; docs/web-client.md, "History").
//
//   create_note   logged at once, with the note's snapshot
//   delete_note   logged at once, with the pre-deletion snapshot
//   update_note   debounced 15 s per note; the snapshot is taken when it fires
//   rename_board  debounced 15 s; the name is the one current when it fires
//
// A logged entry goes to the outbox (IndexedDB) and is sent at once. What
// could not be sent (offline, server down) stays in the outbox and is sent by
// the 30-second flush, or by a later session. On page unload the debounced
// entries fire early and everything goes out in a beacon; when the board
// view is torn down they fire early and go out by fetch.
//
// POST /log does not de-duplicate (docs/changelog.md), so an entry leaves the
// outbox only when the server acknowledged it, and is sent again only when
// the server did not store it (a 5xx, 429, 401, or no connection at all).
// An answer lost after the server stored the entries (the connection dropped
// mid-response) is the one case that logs an entry twice.
import type { LogEntry, Note } from '../api/types';
import type { Clock, LocalEdit } from '../sync/client';
import { realClock } from '../sync/client';
import { renderNote, renderRename } from './format';
import type { Outbox, Queued } from './outbox';

/** DEBOUNCE is the quiet time before update_note and rename_board are logged. */
export const DEBOUNCE = 15_000;
/** FLUSH_EVERY is how often unsent entries are sent again. */
export const FLUSH_EVERY = 30_000;
/** MAX_ENTRIES is the most entries one POST /log takes. */
export const MAX_ENTRIES = 500;
/** BEACON_BYTES keeps a beacon under the browsers' 64 KiB quota. */
export const BEACON_BYTES = 60_000;

/** LogSender is the server as the changelog sees it (the API module, or a fake). */
export interface LogSender {
  postLog(boardId: string, entries: LogEntry[]): Promise<unknown>;
}

export interface ChangelogOptions {
  boardId: string;
  sender: LogSender;
  outbox: Outbox;
  /** current reads a note as the user sees it now (the sync client's copy). */
  current: (id: string) => Note | undefined;
  /** currentName reads the board's name as the user sees it now. */
  currentName: () => string;
  /** beacon sends a body on page unload (navigator.sendBeacon); false when refused. */
  beacon?: (body: string) => boolean;
  clock?: Clock;
}

/** Errors the sender throws: ApiError has this shape. */
interface SendError {
  status: number;
  field?: string;
}

export class ChangelogClient {
  private readonly o: ChangelogOptions;
  private readonly clock: Clock;
  /** queue is the outbox in memory, oldest first. */
  private queue: Queued[] = [];
  private seq = 0;
  private readonly noteTimers = new Map<string, unknown>();
  private renameTimer: unknown = null;
  private flushTimer: unknown = null;
  private sending: Promise<void> | null = null;
  /** done holds the seqs this session has finished with (sent or dropped). */
  private done = new Set<number>();
  /** inFlight holds the seqs of the request whose answer is awaited. */
  private inFlight = new Set<number>();
  private closed = false;
  private started: Promise<void> | null = null;
  /** writes chains outbox writes so a removal never overtakes its put. */
  private writes: Promise<void> = Promise.resolve();

  constructor(o: ChangelogOptions) {
    this.o = o;
    this.clock = o.clock ?? realClock;
    this.seq = this.clock.now() * 1000;
  }

  /** start takes over what earlier sessions left in the outbox, sends it and starts the 30-second flush. */
  start(): Promise<void> {
    if (!this.started) {
      this.started = (async () => {
        let left: Queued[] = [];
        try {
          left = await this.o.outbox.load(this.o.boardId);
        } catch {
          // No outbox: entries of earlier sessions are not ours to send.
        }
        if (this.closed) return;
        // The outbox may hold entries this session logged (and maybe sent)
        // while it was being read: those are not taken twice.
        const mine = new Set(this.queue.map((q) => q.seq));
        this.queue = [...left.filter((q) => !mine.has(q.seq) && !this.done.has(q.seq)), ...this.queue];
        this.scheduleFlush();
        void this.send();
      })();
    }
    return this.started;
  }

  /** pending is how many entries wait: debounced ones and unsent ones. */
  get pending(): number {
    return this.queue.length + this.noteTimers.size + (this.renameTimer !== null ? 1 : 0);
  }

  // ---- the rules ----

  /** noteCreated logs create_note at once. */
  noteCreated(n: Note): void {
    if (this.closed) return;
    this.log({ noteId: n.id, action: 'create_note', content: renderNote(n) });
  }

  /** noteUpdated (re)starts the note's 15-second wait; the snapshot is taken when it ends. */
  noteUpdated(id: string): void {
    if (this.closed) return;
    const t = this.noteTimers.get(id);
    if (t !== undefined) this.clock.clearTimeout(t);
    this.noteTimers.set(
      id,
      this.clock.setTimeout(() => this.fireNote(id), DEBOUNCE),
    );
  }

  /**
   * noteDeleted logs delete_note at once with the note as it was. A waiting
   * update of the note is dropped: the deletion carries that same snapshot.
   */
  noteDeleted(before: Note): void {
    if (this.closed) return;
    const t = this.noteTimers.get(before.id);
    if (t !== undefined) {
      this.clock.clearTimeout(t);
      this.noteTimers.delete(before.id);
    }
    this.log({ noteId: before.id, action: 'delete_note', content: renderNote(before) });
  }

  /** boardRenamed (re)starts the board's 15-second wait; the name is read when it ends. */
  boardRenamed(): void {
    if (this.closed) return;
    if (this.renameTimer !== null) this.clock.clearTimeout(this.renameTimer);
    this.renameTimer = this.clock.setTimeout(() => this.fireRename(), DEBOUNCE);
  }

  private fireNote(id: string, sendNow = true) {
    this.noteTimers.delete(id);
    const n = this.o.current(id);
    if (!n) return; // gone meanwhile: its deletion was logged with the snapshot
    this.log({ noteId: id, action: 'update_note', content: renderNote(n) }, sendNow);
  }

  private fireRename(sendNow = true) {
    this.renameTimer = null;
    const name = this.o.currentName();
    if (name) this.log({ noteId: '', action: 'rename_board', content: renderRename(name) }, sendNow);
  }

  /** fireAll ends every wait now (the page or the view is going away); the caller sends. */
  private fireAll() {
    for (const [id, t] of [...this.noteTimers]) {
      this.clock.clearTimeout(t);
      this.fireNote(id, false);
    }
    if (this.renameTimer !== null) {
      this.clock.clearTimeout(this.renameTimer);
      this.fireRename(false);
    }
  }

  // ---- the outbox ----

  private log(entry: LogEntry, sendNow = true) {
    const q: Queued = { boardId: this.o.boardId, seq: ++this.seq, entry };
    this.queue.push(q);
    this.write(() => this.o.outbox.put([q]));
    if (sendNow) void this.send();
  }

  private write(fn: () => Promise<void>) {
    this.writes = this.writes.then(fn).catch(() => {
      // IndexedDB unavailable or full: the entry is still sent from memory.
    });
  }

  /** whenIdle resolves when sends and outbox writes under way are done (tests). */
  async whenIdle(): Promise<void> {
    while (this.sending) await this.sending;
    await this.writes;
  }

  private scheduleFlush() {
    if (this.closed) return;
    this.flushTimer = this.clock.setTimeout(() => {
      void this.send();
      this.scheduleFlush();
    }, FLUSH_EVERY);
  }

  /** send posts the queue, MAX_ENTRIES at a time, one request at a time. */
  send(): Promise<void> {
    if (this.sending || !this.queue.length) return this.sending ?? Promise.resolve();
    this.sending = (async () => {
      while (this.queue.length) {
        const batch = this.queue.slice(0, MAX_ENTRIES);
        batch.forEach((q) => this.inFlight.add(q.seq));
        try {
          await this.o.sender.postLog(
            this.o.boardId,
            batch.map((q) => q.entry),
          );
        } catch (e) {
          const err = e as SendError;
          if (err.status === 400 && /^entries\[(\d+)\]/.test(err.field ?? '')) {
            // One refused entry stores nothing; drop it (it can never be
            // stored) and send the rest again.
            const i = Number(/^entries\[(\d+)\]/.exec(err.field!)![1]);
            this.drop(batch[i] ? [batch[i]] : batch);
            continue;
          }
          if (err.status === 403 || err.status === 400 || err.status === 413 || err.status === 404) {
            this.drop(batch); // the server will never take these
            continue;
          }
          return; // offline, 401, 429, 5xx: nothing stored; the flush tries again
        } finally {
          this.inFlight.clear();
        }
        this.drop(batch);
      }
    })().finally(() => {
      this.sending = null;
    });
    return this.sending;
  }

  private drop(batch: Queued[]) {
    const gone = new Set(batch.map((q) => q.seq));
    gone.forEach((s) => this.done.add(s));
    this.queue = this.queue.filter((q) => !gone.has(q.seq));
    this.write(() => this.o.outbox.remove(this.o.boardId, [...gone]));
  }

  // ---- going away ----

  /**
   * unload runs on pagehide: every wait ends now and the queue goes out in
   * beacons (each under the 64 KiB quota). What a beacon took leaves the
   * outbox; what the browser refused stays there for the next session.
   */
  unload(): void {
    if (this.closed || !this.o.beacon) return;
    this.fireAll();
    const sent: Queued[] = [];
    let batch: Queued[] = [];
    let size = 0;
    const go = () => {
      if (!batch.length) return true;
      const ok = this.o.beacon!(JSON.stringify({ entries: batch.map((q) => q.entry) }));
      if (ok) sent.push(...batch);
      batch = [];
      size = 0;
      return ok;
    };
    // A request under way may well arrive; its entries stay in the outbox
    // rather than being sent twice.
    for (const q of this.queue.filter((q) => !this.inFlight.has(q.seq))) {
      const len = JSON.stringify(q.entry).length + 1;
      if (batch.length && (size + len > BEACON_BYTES || batch.length >= MAX_ENTRIES) && !go()) break;
      batch.push(q);
      size += len;
    }
    go();
    this.drop(sent);
  }

  /** close ends every wait, sends what is queued (by fetch) and stops; safe to call twice. */
  close(): Promise<void> {
    if (this.closed) return this.whenIdle();
    this.fireAll();
    this.closed = true;
    if (this.flushTimer !== null) this.clock.clearTimeout(this.flushTimer);
    void this.send();
    return this.whenIdle();
  }
}

/** EditSource is the sync client as the changelog sees it. */
export interface EditSource {
  onLocalEdit(cb: (e: LocalEdit) => void): () => void;
}

/** feedFrom routes a sync client's local edits into the changelog; returns the unsubscribe. */
export function feedFrom(src: EditSource, log: ChangelogClient): () => void {
  return src.onLocalEdit((e) => {
    if (e.kind === 'create') log.noteCreated(e.note);
    else if (e.kind === 'update') log.noteUpdated(e.note.id);
    else if (e.kind === 'delete') log.noteDeleted(e.before);
    else log.boardRenamed();
  });
}
