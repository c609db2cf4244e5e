// LocalStore: where a board's copy and its queue of unsent edits live
// between page loads. IdbStore (IndexedDB) in the browser; MemoryStore in
// tests and when IndexedDB is unavailable (private windows of some browsers).
import type { BoardMeta, Connector, Frame, Note, TrackerItem } from '../api/types';

/** Why the server refused an edit (400/403/413), shown to the user. */
export interface Rejection {
  status: number;
  message: string;
  field?: string;
}

/**
 * One unsent local edit. Upserts carry the whole row, and the server copy
 * the edit was made on (base), so that the server and this client can merge
 * it into what others committed since (docs/web-client.md, "The merge rule").
 */
export interface PendingEdit {
  /** seq orders a board's edits; unique per board. */
  seq: number;
  kind: 'note' | 'item' | 'connector' | 'frame' | 'board';
  /** id of the row; '' for a board rename. */
  id: string;
  op: 'upsert' | 'delete';
  row?: Note | TrackerItem | Connector | Frame;
  /** name is the new board name (kind 'board'). */
  name?: string;
  /** at is when the edit was made (ISO 8601). */
  at: string;
  /**
   * base is the row the edit was made on: the server copy at baseVersion;
   * null for a row the server did not have. Edits of one row that coalesce
   * keep the oldest base. Absent on edits queued before merging existed
   * (they are pushed without baseVersion, and replace the row).
   */
  base?: Note | TrackerItem | Connector | Frame | null;
  /** baseVersion is base's version, sent as the row's baseVersion; 0 for a new row. */
  baseVersion?: number;
  /**
   * afterSeq: the edit was made on top of the push of edit afterSeq, still
   * unanswered; base is the row as shown then. The edit waits (is not
   * pushed) until that push's resulting row is known.
   */
  afterSeq?: number;
  /**
   * afterVersion: the push the edit was made on top of was applied as this
   * version; the edit waits until the server copy reaches it, and is then
   * merged onto the row at that version (which becomes its base).
   */
  afterVersion?: number;
  /** batchKey is the Idempotency-Key of the push this edit was sent in. */
  batchKey?: string;
  rejected?: Rejection;
}

/** CachedBoard is what a store holds for one board. */
export interface CachedBoard {
  version: number;
  board: BoardMeta | null;
  notes: Note[];
  items: TrackerItem[];
  connectors: Connector[];
  frames: Frame[];
  pending: PendingEdit[];
}

/** ServerPatch is one change to the server copy, written atomically. */
export interface ServerPatch {
  version: number;
  board?: BoardMeta | null;
  /** reset drops every server row first (a pull with reset: true). */
  reset?: boolean;
  putNotes: Note[];
  deleteNotes: string[];
  putItems: TrackerItem[];
  deleteItems: string[];
  /** Connectors and frames (issue 24): absent is none. */
  putConnectors?: Connector[];
  deleteConnectors?: string[];
  putFrames?: Frame[];
  deleteFrames?: string[];
}

export interface LocalStore {
  /** load returns the board's copy; an empty one (version 0) if none. */
  load(boardId: string): Promise<CachedBoard>;
  applyServer(boardId: string, patch: ServerPatch): Promise<void>;
  putPending(boardId: string, edits: PendingEdit[]): Promise<void>;
  deletePending(boardId: string, seqs: number[]): Promise<void>;
  /** getValue/setValue keep small app data (the board list, access answers). */
  getValue<T>(key: string): Promise<T | undefined>;
  setValue(key: string, value: unknown): Promise<void>;
  /**
   * countPending counts the rows (notes, items, board names) with unsent
   * edits, refused ones included, over every board: what the header calls
   * "N edits waiting to sync", asked before a logout discards them.
   */
  countPending(): Promise<number>;
}

const clone = <T>(v: T): T => structuredClone(v);

/** MemoryStore keeps everything in memory (tests; fallback without IndexedDB). */
export class MemoryStore implements LocalStore {
  private boards = new Map<
    string,
    { version: number; board: BoardMeta | null; notes: Map<string, Note>; items: Map<string, TrackerItem>; connectors: Map<string, Connector>; frames: Map<string, Frame>; pending: Map<number, PendingEdit> }
  >();
  private values = new Map<string, unknown>();

  private get(boardId: string) {
    let b = this.boards.get(boardId);
    if (!b) {
      b = { version: 0, board: null, notes: new Map(), items: new Map(), connectors: new Map(), frames: new Map(), pending: new Map() };
      this.boards.set(boardId, b);
    }
    return b;
  }

  async load(boardId: string): Promise<CachedBoard> {
    const b = this.get(boardId);
    return clone({
      version: b.version,
      board: b.board,
      notes: [...b.notes.values()],
      items: [...b.items.values()],
      connectors: [...b.connectors.values()],
      frames: [...b.frames.values()],
      pending: [...b.pending.values()].sort((x, y) => x.seq - y.seq),
    });
  }

  async applyServer(boardId: string, p: ServerPatch): Promise<void> {
    const b = this.get(boardId);
    if (p.reset) {
      b.notes.clear();
      b.items.clear();
      b.connectors.clear();
      b.frames.clear();
    }
    p.putNotes.forEach((n) => b.notes.set(n.id, clone(n)));
    p.putConnectors?.forEach((c) => b.connectors.set(c.id, clone(c)));
    p.deleteConnectors?.forEach((id) => b.connectors.delete(id));
    p.putFrames?.forEach((f) => b.frames.set(f.id, clone(f)));
    p.deleteFrames?.forEach((id) => b.frames.delete(id));
    p.deleteNotes.forEach((id) => b.notes.delete(id));
    p.putItems.forEach((i) => b.items.set(i.id, clone(i)));
    p.deleteItems.forEach((id) => b.items.delete(id));
    b.version = p.version;
    if (p.board !== undefined) b.board = clone(p.board);
  }

  async putPending(boardId: string, edits: PendingEdit[]): Promise<void> {
    const b = this.get(boardId);
    edits.forEach((e) => b.pending.set(e.seq, clone(e)));
  }

  async deletePending(boardId: string, seqs: number[]): Promise<void> {
    const b = this.get(boardId);
    seqs.forEach((s) => b.pending.delete(s));
  }

  async getValue<T>(key: string): Promise<T | undefined> {
    return clone(this.values.get(key)) as T | undefined;
  }

  async setValue(key: string, value: unknown): Promise<void> {
    this.values.set(key, clone(value));
  }

  async countPending(): Promise<number> {
    let n = 0;
    this.boards.forEach((b) => (n += new Set([...b.pending.values()].map((e) => `${e.kind}\0${e.id}`)).size));
    return n;
  }
}
