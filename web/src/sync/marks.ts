// MarkBook: what the server's merges did to this client's own changes.
// The client remembers which versions its acknowledged pushes produced, per
// row, for a bounded recent window; a live `changes` message may carry
// events about an earlier version (docs/web-client.md, "Marks"). An event
// about one of this client's versions becomes a mark on that row, kept
// (and persisted) until the user dismisses it. Pure: the sync client
// persists save() where it likes.
import type { LiveEvent } from '../api/types';

/** Table names a row's kind as live events do. */
export type Table = 'note' | 'item';

/**
 * Mark tells the UI that a merge undid part of one of my changes to a row:
 * `overlap`, someone else's later change overwrote lines I had written (my
 * text is in the changelog entry logKey); `revived`, a note I deleted was
 * brought back by someone's offline edit (logKey: the delete_note entry
 * holding it as I deleted it). version is the version my change
 * produced.
 */
export interface Mark {
  table: Table;
  id: string;
  kind: 'overlap' | 'revived';
  version: number;
  logKey?: string;
}

/** MyPush is one acknowledged push: the version it produced and its rows ("note:n1"). */
export interface MyPush {
  v: number;
  rows: string[];
}

/** SavedMarks is what a MarkBook keeps between page loads. */
export interface SavedMarks {
  pushes: MyPush[];
  marks: Mark[];
}

/** MY_PUSHES_KEPT bounds how many of my recent pushes are remembered. */
export const MY_PUSHES_KEPT = 200;
/** MY_ROWS_KEPT bounds the rows of those pushes, all together. */
export const MY_ROWS_KEPT = 5000;
/** EVENTS_KEPT bounds the events waiting for the answer to a push of mine that may have made them. */
export const EVENTS_KEPT = 100;
/** MARKS_KEPT bounds the marks not yet dismissed (the oldest go first). */
export const MARKS_KEPT = 500;

const rowKey = (table: Table, id: string) => table + ':' + id;

export class MarkBook {
  private pushes: MyPush[] = [];
  /** mine maps a version to the rows my push at it changed. */
  private mine = new Map<number, Set<string>>();
  private rowCount = 0;
  private markList: readonly Mark[] = [];
  /**
   * waiting holds events no push of mine explains yet: a live message can
   * come before the answer to the push it is about.
   */
  private waiting: LiveEvent[] = [];

  constructor(saved?: SavedMarks | null) {
    for (const p of saved?.pushes ?? []) this.addPush(p);
    this.markList = saved?.marks ?? [];
  }

  /** marks lists the marks not dismissed, oldest first (the same array until they change). */
  marks(): readonly Mark[] {
    return this.markList;
  }

  /** isMine says whether my push at version changed the row. */
  isMine(table: Table, id: string, version: number): boolean {
    return this.mine.get(version)?.has(rowKey(table, id)) ?? false;
  }

  /**
   * recordPush remembers that my push produced version, changing rows; true
   * when an event that was waiting for it made a mark.
   */
  recordPush(version: number, rows: readonly { table: Table; id: string }[]): boolean {
    if (!rows.length) return false;
    const known = this.mine.get(version);
    const add = rows.map((r) => rowKey(r.table, r.id)).filter((k) => !known?.has(k));
    if (add.length) this.addPush({ v: version, rows: add });
    const waiting = this.waiting;
    this.waiting = [];
    return this.onEvents(waiting);
  }

  /** onEvents records a mark for each event about a change of mine; true when marks changed. */
  onEvents(events: readonly LiveEvent[]): boolean {
    let added: Mark[] = [];
    for (const e of events) {
      if ((e.kind !== 'overlap' && e.kind !== 'revived') || (e.table !== 'note' && e.table !== 'item')) continue;
      if (!this.isMine(e.table, e.id, e.version)) {
        this.waiting.push(e);
        continue;
      }
      const m: Mark = { table: e.table, id: e.id, kind: e.kind, version: e.version };
      // An overlap's entry holds my overwritten note; a revival's, the note as I deleted it.
      if (e.logKey) m.logKey = e.logKey;
      const same = (x: Mark) => x.table === m.table && x.id === m.id && x.kind === m.kind && x.version === m.version && x.logKey === m.logKey;
      if (this.markList.some(same) || added.some(same)) continue;
      added.push(m);
    }
    if (this.waiting.length > EVENTS_KEPT) this.waiting = this.waiting.slice(-EVENTS_KEPT);
    if (!added.length) return false;
    added = [...this.markList, ...added];
    this.markList = added.slice(-MARKS_KEPT);
    return true;
  }

  /** dismiss drops the marks of a row; true when there were some. */
  dismiss(id: string, table: Table = 'note'): boolean {
    const left = this.markList.filter((m) => m.id !== id || m.table !== table);
    if (left.length === this.markList.length) return false;
    this.markList = left;
    return true;
  }

  /** save is the state to keep between page loads. */
  save(): SavedMarks {
    return { pushes: this.pushes.map((p) => ({ v: p.v, rows: [...p.rows] })), marks: [...this.markList] };
  }

  private addPush(p: MyPush) {
    this.pushes.push(p);
    let set = this.mine.get(p.v);
    if (!set) this.mine.set(p.v, (set = new Set()));
    p.rows.forEach((k) => set.add(k));
    this.rowCount += p.rows.length;
    // Forget the oldest pushes past the window (the newest is always kept).
    while (this.pushes.length > 1 && (this.pushes.length > MY_PUSHES_KEPT || this.rowCount > MY_ROWS_KEPT)) {
      const old = this.pushes.shift()!;
      this.rowCount -= old.rows.length;
      const s = this.mine.get(old.v);
      if (s) {
        old.rows.forEach((k) => s.delete(k));
        if (!s.size) this.mine.delete(old.v);
      }
    }
  }
}
