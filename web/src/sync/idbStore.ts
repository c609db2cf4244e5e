// IdbStore: LocalStore on IndexedDB (through idb). Rows are one record each,
// keyed [boardId, id], so applying a change writes only what changed; the
// queue of unsent edits is keyed [boardId, seq] and survives reloads and
// browser restarts. Each user has a database of their own (auth/localData.ts
// names it), so nothing one user fetched is read for another.
import { openDB, type IDBPDatabase } from 'idb';
import type { BoardMeta, Connector, Frame, Note, TrackerItem } from '../api/types';
import type { CachedBoard, LocalStore, PendingEdit, ServerPatch } from './store';

/** DB_VERSION 2 added the connectors and frames stores (issue 24). */
const DB_VERSION = 2;
/** CHUNK is how many rows one write transaction of a big patch holds. */
const CHUNK = 250;

interface BoardRecord {
  boardId: string;
  version: number;
  board: BoardMeta | null;
}

/** boardRange covers every key [boardId, …]. */
const boardRange = (boardId: string) => IDBKeyRange.bound([boardId], [boardId, []]);

export class IdbStore implements LocalStore {
  private constructor(private readonly db: IDBPDatabase) {}

  /**
   * open opens (or creates) the database name. The connection closes itself
   * when another one wants the database deleted (a logout in this tab or
   * another): the deletion would wait for it otherwise.
   */
  static async open(name: string): Promise<IdbStore> {
    const db: IDBPDatabase = await openDB(name, DB_VERSION, {
      upgrade(db, oldVersion) {
        if (oldVersion < 1) {
          db.createObjectStore('boards', { keyPath: 'boardId' });
          db.createObjectStore('notes');
          db.createObjectStore('items');
          db.createObjectStore('pending');
          db.createObjectStore('values');
        }
        if (oldVersion < 2) {
          db.createObjectStore('connectors');
          db.createObjectStore('frames');
        }
      },
      blocking() {
        db.close();
      },
    });
    return new IdbStore(db);
  }

  close(): void {
    this.db.close();
  }

  async countPending(): Promise<number> {
    const tx = this.db.transaction('pending', 'readonly');
    const [keys, edits] = await Promise.all([tx.store.getAllKeys() as Promise<[string, number][]>, tx.store.getAll() as Promise<PendingEdit[]>, tx.done]);
    return new Set(edits.map((e, i) => `${keys[i][0]}\0${e.kind}\0${e.id}`)).size;
  }

  async load(boardId: string): Promise<CachedBoard> {
    const tx = this.db.transaction(['boards', 'notes', 'items', 'connectors', 'frames', 'pending'], 'readonly');
    const [rec, notes, items, connectors, frames, pending] = await Promise.all([
      tx.objectStore('boards').get(boardId) as Promise<BoardRecord | undefined>,
      tx.objectStore('notes').getAll(boardRange(boardId)) as Promise<Note[]>,
      tx.objectStore('items').getAll(boardRange(boardId)) as Promise<TrackerItem[]>,
      tx.objectStore('connectors').getAll(boardRange(boardId)) as Promise<Connector[]>,
      tx.objectStore('frames').getAll(boardRange(boardId)) as Promise<Frame[]>,
      tx.objectStore('pending').getAll(boardRange(boardId)) as Promise<PendingEdit[]>,
    ]);
    await tx.done;
    return { version: rec?.version ?? 0, board: rec?.board ?? null, notes, items, connectors, frames, pending };
  }

  async applyServer(boardId: string, p: ServerPatch): Promise<void> {
    const rows = p.putNotes.length + p.putItems.length + (p.putConnectors?.length ?? 0) + (p.putFrames?.length ?? 0);
    if (rows > CHUNK) return this.applyServerInChunks(boardId, p);
    const tx = this.db.transaction(['boards', 'notes', 'items', 'connectors', 'frames'], 'readwrite');
    const notes = tx.objectStore('notes');
    const items = tx.objectStore('items');
    const connectors = tx.objectStore('connectors');
    const frames = tx.objectStore('frames');
    const boards = tx.objectStore('boards');
    const ops: Promise<unknown>[] = [];
    if (p.reset) {
      ops.push(notes.delete(boardRange(boardId)), items.delete(boardRange(boardId)), connectors.delete(boardRange(boardId)), frames.delete(boardRange(boardId)));
    }
    for (const c of p.putConnectors ?? []) ops.push(connectors.put(c, [boardId, c.id]));
    for (const id of p.deleteConnectors ?? []) ops.push(connectors.delete([boardId, id]));
    for (const f of p.putFrames ?? []) ops.push(frames.put(f, [boardId, f.id]));
    for (const id of p.deleteFrames ?? []) ops.push(frames.delete([boardId, id]));
    for (const n of p.putNotes) ops.push(notes.put(n, [boardId, n.id]));
    for (const id of p.deleteNotes) ops.push(notes.delete([boardId, id]));
    for (const i of p.putItems) ops.push(items.put(i, [boardId, i.id]));
    for (const id of p.deleteItems) ops.push(items.delete([boardId, id]));
    const prev = (await boards.get(boardId)) as BoardRecord | undefined;
    ops.push(boards.put({ boardId, version: p.version, board: p.board !== undefined ? p.board : (prev?.board ?? null) } satisfies BoardRecord));
    await Promise.all([...ops, tx.done]);
  }

  /**
   * applyServerInChunks writes a big patch (a full pull) in transactions of
   * CHUNK rows, giving the page a turn between them: one transaction of
   * thousands of rows would freeze the page while the rows are cloned.
   * The version is written last, so a page closed halfway leaves the old
   * version (or 0 after a reset's first step), and the next start pulls
   * what is missing again.
   */
  private async applyServerInChunks(boardId: string, p: ServerPatch): Promise<void> {
    {
      const tx = this.db.transaction(['boards', 'notes', 'items', 'connectors', 'frames'], 'readwrite');
      const prev = (await tx.objectStore('boards').get(boardId)) as BoardRecord | undefined;
      const ops: Promise<unknown>[] = [];
      if (p.reset) {
        for (const s of ['notes', 'items', 'connectors', 'frames'] as const) ops.push(tx.objectStore(s).delete(boardRange(boardId)));
        ops.push(tx.objectStore('boards').put({ boardId, version: 0, board: prev?.board ?? null } satisfies BoardRecord));
      }
      await Promise.all([...ops, tx.done]);
    }
    type Store = 'notes' | 'items' | 'connectors' | 'frames';
    const puts: [Store, { id: string }][] = [
      ...p.putNotes.map((n) => ['notes', n] as [Store, Note]),
      ...p.putItems.map((i) => ['items', i] as [Store, TrackerItem]),
      ...(p.putConnectors ?? []).map((c) => ['connectors', c] as [Store, Connector]),
      ...(p.putFrames ?? []).map((f) => ['frames', f] as [Store, Frame]),
    ];
    for (let i = 0; i < puts.length; i += CHUNK) {
      await new Promise((r) => setTimeout(r, 0));
      const tx = this.db.transaction(['notes', 'items', 'connectors', 'frames'], 'readwrite');
      await Promise.all([...puts.slice(i, i + CHUNK).map(([store, row]) => tx.objectStore(store).put(row, [boardId, row.id])), tx.done]);
    }
    await this.applyServer(boardId, { ...p, reset: false, putNotes: [], putItems: [], putConnectors: [], putFrames: [] });
  }

  async putPending(boardId: string, edits: PendingEdit[]): Promise<void> {
    const tx = this.db.transaction('pending', 'readwrite');
    await Promise.all([...edits.map((e) => tx.store.put(e, [boardId, e.seq])), tx.done]);
  }

  async deletePending(boardId: string, seqs: number[]): Promise<void> {
    const tx = this.db.transaction('pending', 'readwrite');
    await Promise.all([...seqs.map((s) => tx.store.delete([boardId, s])), tx.done]);
  }

  async getValue<T>(key: string): Promise<T | undefined> {
    return (await this.db.get('values', key)) as T | undefined;
  }

  async setValue(key: string, value: unknown): Promise<void> {
    await this.db.put('values', value, key);
  }
}
