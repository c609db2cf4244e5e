// The changelog's outbox: entries that are due but not yet acknowledged by
// the server. It lives in IndexedDB (its own database, so the sync store's
// schema is untouched), so entries logged offline, or when the page closed
// before they were sent, are sent by the next session on that board.
import { openDB, type IDBPDatabase } from 'idb';
import type { LogEntry } from '../api/types';

/** Queued is one entry waiting in the outbox; seq orders a board's entries. */
export interface Queued {
  boardId: string;
  seq: number;
  entry: LogEntry;
}

/** Outbox keeps queued entries across reloads. */
export interface Outbox {
  load(boardId: string): Promise<Queued[]>;
  put(q: Queued[]): Promise<void>;
  remove(boardId: string, seqs: number[]): Promise<void>;
  /** count counts the entries of every board (asked before logout). */
  count(): Promise<number>;
}

/** MemoryOutbox is an Outbox that forgets on reload (no IndexedDB, tests). */
export class MemoryOutbox implements Outbox {
  readonly rows = new Map<string, Queued>();
  async load(boardId: string) {
    return [...this.rows.values()].filter((q) => q.boardId === boardId).sort((a, b) => a.seq - b.seq);
  }
  async put(qs: Queued[]) {
    qs.forEach((q) => this.rows.set(`${q.boardId}\0${q.seq}`, q));
  }
  async remove(boardId: string, seqs: number[]) {
    seqs.forEach((s) => this.rows.delete(`${boardId}\0${s}`));
  }
  async count() {
    return this.rows.size;
  }
}

const range = (boardId: string) => IDBKeyRange.bound([boardId], [boardId, []]);

/**
 * IdbOutbox is the Outbox on IndexedDB, keyed [boardId, seq]: a database
 * per user (auth/localData.ts names it), closed when a logout deletes it.
 */
export class IdbOutbox implements Outbox {
  private constructor(private readonly db: IDBPDatabase) {}

  static async open(name: string): Promise<IdbOutbox> {
    const db: IDBPDatabase = await openDB(name, 1, {
      upgrade(db) {
        db.createObjectStore('outbox', { keyPath: ['boardId', 'seq'] });
      },
      blocking() {
        db.close();
      },
    });
    return new IdbOutbox(db);
  }

  async count(): Promise<number> {
    return this.db.count('outbox');
  }

  close(): void {
    this.db.close();
  }

  async load(boardId: string): Promise<Queued[]> {
    return (await this.db.getAll('outbox', range(boardId))) as Queued[];
  }

  async put(qs: Queued[]): Promise<void> {
    const tx = this.db.transaction('outbox', 'readwrite');
    await Promise.all([...qs.map((q) => tx.store.put(q)), tx.done]);
  }

  async remove(boardId: string, seqs: number[]): Promise<void> {
    const tx = this.db.transaction('outbox', 'readwrite');
    await Promise.all([...seqs.map((s) => tx.store.delete([boardId, s])), tx.done]);
  }
}
