// PendingQueue: a board's queue of unsent edits, and the rules that keep
// them on top of the server copy (docs/web-client.md, "The merge rule").
// Pure: no timers, no network, no storage. The sync client feeds it the
// server copy, sends the batches it picks, and writes what takeWrites()
// returns to the local store.
//
// Every upsert keeps its base: the server copy it was made on. The push
// sends base's version as the row's baseVersion and the server merges the
// row into what others committed since; when a newer server row reaches
// this client first, the unsent edit is merged onto it here, with the same
// merge (merge.ts), and the new row becomes its base.
import type { Changes, Connector, Frame, Note, PushBody, TrackerItem } from '../api/types';
import { mergeRow, type Kind, type Row } from './merge';
import type { PendingEdit, Rejection } from './store';

/** Limits of one push (docs/sync.md). */
export const MAX_UPSERTS = 500;
export const MAX_DELETES = 5000;

/** RowKind is the kind of a row an edit changes. */
export type RowKind = Kind;

/** ROW_KINDS lists the kinds of rows, in the order a push carries them. */
export const ROW_KINDS: readonly RowKind[] = ['note', 'item', 'connector', 'frame'];

/**
 * WIRE names each kind's keys: the push envelope's list (`notes`, …) and a
 * pull's rows and deleted ids.
 */
export const WIRE = {
  note: { list: 'notes', deleted: 'deletedNoteIds' },
  item: { list: 'trackerItems', deleted: 'deletedTrackerItemIds' },
  connector: { list: 'connectors', deleted: 'deletedConnectorIds' },
  frame: { list: 'frames', deleted: 'deletedFrameIds' },
} as const satisfies Record<RowKind, { list: keyof PushBody & keyof Changes; deleted: keyof Changes }>;

/** kindOfList is the kind whose push list is named list (notes → note). */
const kindOfList = (list: string): RowKind | undefined => ROW_KINDS.find((k) => WIRE[k].list === list);

/** pushList is a kind's list in a push body, made when the body has none yet (connectors and frames are sent only when there are some). */
function pushList(body: PushBody, kind: RowKind): { upserted: Row[]; deleted: string[] } {
  const k = WIRE[kind].list;
  const b = body as unknown as Record<string, { upserted: Row[]; deleted: string[] } | undefined>;
  return (b[k] ??= { upserted: [], deleted: [] });
}

/** ServerCopy is the server copy as the queue reads it: rows as the server last sent them. */
export interface ServerCopy {
  readonly version: number;
  row(kind: RowKind, id: string): Row | undefined;
}

/** NewEdit is an edit as the client makes it. */
export type NewEdit =
  | { kind: RowKind; id: string; op: 'upsert'; row: Row }
  | { kind: RowKind; id: string; op: 'delete' }
  | { kind: 'board'; id: ''; op: 'upsert'; name: string };

/** Batch is one push: its idempotency key and its edits. */
export interface Batch {
  key: string;
  edits: PendingEdit[];
}

/** PushError is how the server refused a push (ApiError's shape). */
export interface PushError {
  status: number;
  message: string;
  field?: string;
}

/** strip leaves out what a queued row does not carry: version, deletedAt, baseVersion. */
export function strip<T extends Row>(row: T): T {
  const r = { ...row };
  delete r.version;
  delete r.deletedAt;
  delete r.baseVersion;
  return r;
}

/** waits says whether an upsert waits for the row of a push it was made on top of. */
const waits = (e: PendingEdit) => e.op === 'upsert' && (e.afterSeq !== undefined || e.afterVersion !== undefined);

/**
 * stored is the row the server stores for the upsert e when its row is cur:
 * e merged into cur when cur moved on from e's base, e's row otherwise (a
 * row the server does not have, or has as e's base, is e's row).
 */
function stored(kind: RowKind, e: PendingEdit, cur: Row | undefined): Row {
  if (cur && e.base && e.baseVersion && cur.version !== e.baseVersion) return mergeRow(kind, e.base, cur, e.row!).merged;
  return e.row!;
}

const BASE_KEYS = ['base', 'baseVersion', 'afterSeq', 'afterVersion'] as const;

/** carryBase gives `to` the base of `from` (coalescing keeps the oldest base). */
function carryBase(from: PendingEdit, to: PendingEdit) {
  for (const k of BASE_KEYS) {
    if (from[k] !== undefined) (to as unknown as Record<string, unknown>)[k] = from[k];
    else delete to[k];
  }
}

export class PendingQueue {
  private edits: PendingEdit[] = [];
  private nextSeq = 1;
  /** inFlight holds the seqs of the push whose answer is awaited. */
  private readonly inFlight = new Set<number>();
  /**
   * landed holds the edits of a push answered with a version the server
   * copy has not reached yet (someone else pushed in between, and the pull
   * that brings the result is on its way): shown until it arrives.
   */
  private landed: { edit: PendingEdit; version: number }[] = [];
  private readonly puts = new Map<number, PendingEdit>();
  private readonly dels = new Set<number>();

  /** load takes the queue as the local store kept it. */
  load(edits: readonly PendingEdit[]): void {
    this.edits = [...edits].sort((a, b) => a.seq - b.seq);
    this.nextSeq = this.edits.reduce((m, e) => Math.max(m, e.seq), 0) + 1;
    // A page closed between the two writes of an answer (the pushed edits
    // deleted, the one on top not yet told their version) leaves an edit
    // waiting for a push that is gone: it is merged onto the copy at the
    // next rows instead. Safe: what the push changed is in its base and
    // not in the copy, and the server merges it back in.
    const seqs = new Set(this.edits.map((e) => e.seq));
    for (const e of this.edits) {
      if (e.afterSeq !== undefined && !seqs.has(e.afterSeq)) {
        delete e.afterSeq;
        e.afterVersion = 0;
        this.dirty(e);
      }
    }
  }

  /** size counts the unsent edits (refused ones included). */
  get size(): number {
    return this.edits.length;
  }

  /** list is the queue in order. */
  list(): readonly PendingEdit[] {
    return this.edits;
  }

  /** rejected lists the edits the server refused. */
  rejected(): PendingEdit[] {
    return this.edits.filter((e) => e.rejected);
  }

  /** waitingRows counts the rows (and board renames) with unsent, unrefused edits. */
  waitingRows(): number {
    return new Set(this.edits.filter((e) => !e.rejected).map((e) => e.kind + ':' + e.id)).size;
  }

  /**
   * add queues an edit made at `at`. shown is the row as the user saw it
   * (the server copy with the queue on top). An edit of a row whose
   * unsent edit is not on its way replaces it and keeps its base; else the
   * base is the server copy, or, on top of a push on its way, the row as
   * shown, and the edit waits for that push's row. base, when given, is an
   * older server row the edit was made on (an editor open for a while): it
   * is the base instead of the copy's row when the row has no other edit
   * in the queue, so the push is merged against it.
   */
  add(e: NewEdit, at: string, server: ServerCopy, shown: Row | undefined, base?: Row): PendingEdit {
    const edit: PendingEdit = { ...e, seq: this.nextSeq++, at };
    // Coalesce: a push never carries a row twice, and a new edit of a
    // refused row (carrying the whole row) takes the refused one's place.
    const i = this.edits.findIndex((p) => p.kind === e.kind && p.id === e.id && !p.batchKey);
    if (i >= 0) {
      carryBase(this.edits[i], edit);
      this.removeAt(i);
    } else if (e.kind !== 'board') {
      const ahead = this.ahead(e.kind, e.id, server);
      if (!ahead) {
        const b = base?.version ? base : server.row(e.kind, e.id);
        edit.base = b ?? null;
        edit.baseVersion = b?.version ?? 0;
      } else if (ahead.edit.op === 'delete') {
        edit.base = null; // the row is gone as far as this edit knows
        edit.baseVersion = 0;
      } else {
        edit.base = shown ?? null;
        if (ahead.version !== undefined) edit.afterVersion = ahead.version;
        else edit.afterSeq = ahead.edit.seq;
      }
    }
    this.edits.push(edit);
    this.dirty(edit);
    return edit;
  }

  /** ahead finds the row's latest edit that is on its way (or landed but not yet in the copy). */
  private ahead(kind: RowKind, id: string, server: ServerCopy): { edit: PendingEdit; version?: number } | null {
    for (let i = this.edits.length - 1; i >= 0; i--) {
      const p = this.edits[i];
      if (p.kind === kind && p.id === id && p.batchKey) return { edit: p };
    }
    for (let i = this.landed.length - 1; i >= 0; i--) {
      const l = this.landed[i];
      if (l.edit.kind === kind && l.edit.id === id && l.version > server.version) return l;
    }
    return null;
  }

  /**
   * nextBatch picks the next push: an interrupted batch first (same key),
   * else up to MAX_UPSERTS upserts and MAX_DELETES deletions of each kind,
   * in order, leaving out refused edits and edits that wait for a row.
   */
  nextBatch(newKey: () => string): Batch | null {
    const live = this.edits.filter((e) => !e.rejected);
    const started = live.find((e) => e.batchKey);
    if (started) return { key: started.batchKey!, edits: live.filter((e) => e.batchKey === started.batchKey) };
    const edits: PendingEdit[] = [];
    const count: Record<string, number> = {};
    for (const e of live) {
      if (waits(e)) continue;
      if (e.kind !== 'board') {
        const k = e.kind + (e.op === 'upsert' ? 'Up' : 'Del');
        count[k] ??= 0;
        const max = e.op === 'upsert' ? MAX_UPSERTS : MAX_DELETES;
        if (count[k] >= max) break; // keep the order: later edits wait for the next push
        count[k]++;
      }
      edits.push(e);
    }
    if (!edits.length) return null;
    const key = newKey();
    for (const e of edits) {
      e.batchKey = key;
      this.dirty(e);
    }
    return { key, edits };
  }

  /** buildPush is the body of a batch's push; upserts carry their baseVersion. */
  buildPush(batch: Batch, clientVersion: number): PushBody {
    const body: PushBody = {
      clientVersion,
      notes: { upserted: [], deleted: [] },
      trackerItems: { upserted: [], deleted: [] },
    };
    for (const e of batch.edits) {
      if (e.kind === 'board') {
        body.board = { name: e.name ?? '', updatedAt: e.at };
        continue;
      }
      const list = pushList(body, e.kind);
      if (e.op === 'delete') list.deleted.push(e.id);
      else list.upserted.push(e.baseVersion ? { ...e.row!, baseVersion: e.baseVersion } : e.row!);
    }
    return body;
  }

  /** sending marks a batch as on its way: it is no longer rebased, and is shown merged onto newer rows. */
  sending(batch: Batch): void {
    batch.edits.forEach((e) => this.inFlight.add(e.seq));
  }

  /** unanswered: the push got no answer. Its edits keep their key, to be sent again as the same push. */
  unanswered(batch: Batch): void {
    batch.edits.forEach((e) => this.inFlight.delete(e.seq));
  }

  /**
   * acked takes the answer to a push: its edits leave the queue, and edits
   * made on top of them wait for the row at serverVersion. When nobody
   * pushed in between (serverVersion is the copy's version + 1, and the
   * answer is not a replay), the rows the server stored are known (the
   * same merge, done here): they are returned, to be applied as the server
   * copy at serverVersion. Otherwise null, and the pushed rows stay shown
   * until the server copy reaches serverVersion (a pull brings it).
   */
  acked(batch: Batch, body: PushBody, serverVersion: number, server: ServerCopy, replayed = false): Changes | null {
    const seqs = new Set(batch.edits.map((e) => e.seq));
    seqs.forEach((s) => this.inFlight.delete(s));
    this.edits = this.edits.filter((e) => !seqs.has(e.seq));
    seqs.forEach((s) => {
      this.puts.delete(s);
      this.dels.add(s);
    });
    for (const e of this.edits) {
      if (e.afterSeq !== undefined && seqs.has(e.afterSeq)) {
        delete e.afterSeq;
        e.afterVersion = serverVersion;
        this.dirty(e);
      }
    }
    let rows: Changes | null = null;
    if (!replayed && serverVersion === server.version + 1) {
      const at = serverVersion;
      const upserted = (kind: RowKind) =>
        batch.edits.filter((e) => e.kind === kind && e.op === 'upsert').map((e) => ({ ...strip(stored(kind, e, server.row(kind, e.id))), version: at, deletedAt: null }));
      rows = {
        serverVersion: at,
        notes: upserted('note') as Note[],
        deletedNoteIds: body.notes.deleted,
        trackerItems: upserted('item') as TrackerItem[],
        deletedTrackerItemIds: body.trackerItems.deleted,
      };
      if (body.connectors) Object.assign(rows, { connectors: upserted('connector') as Connector[], deletedConnectorIds: body.connectors.deleted });
      if (body.frames) Object.assign(rows, { frames: upserted('frame') as Frame[], deletedFrameIds: body.frames.deleted });
    } else if (serverVersion > server.version) {
      batch.edits.forEach((edit) => this.landed.push({ edit, version: serverVersion }));
    }
    this.resolve(server);
    return rows;
  }

  /**
   * reject marks what the server refused. A 400 naming a row
   * (notes.upserted[3].content) marks that edit and lets the others go again
   * in a new push; anything else marks the whole batch. Nothing of the push
   * was applied, so an edit made on top of one of its edits takes that
   * edit's place (it carries the whole row), with its base. A 403 naming
   * a row (a locked note, someone else's note for a "can add notes"
   * invitee: docs/api.md "Locks and roles") is no edit to try again: that
   * edit is dropped, so the row shows the server's copy again, and
   * returned; the others go again.
   */
  reject(batch: Batch, body: PushBody, e: PushError): PendingEdit[] {
    batch.edits.forEach((x) => this.inFlight.delete(x.seq));
    const why: Rejection = { status: e.status, message: e.message, field: e.field };
    let culprits = batch.edits;
    const m = (e.status === 400 || e.status === 403) && e.field ? /^(notes|trackerItems|connectors|frames)\.(upserted|deleted)\[(\d+)\]/.exec(e.field) : null;
    if (m) {
      const kind = kindOfList(m[1])!;
      const list = pushList(body, kind);
      const id = m[2] === 'upserted' ? (list.upserted[Number(m[3])] as Row | undefined)?.id : list.deleted[Number(m[3])];
      const op = m[2] === 'upserted' ? 'upsert' : 'delete';
      const hit = batch.edits.find((x) => x.kind === kind && x.id === id && x.op === op);
      if (hit) culprits = [hit];
      else if (e.status === 403) culprits = [];
    } else if (e.status === 400 && e.field?.startsWith('board')) {
      culprits = batch.edits.filter((x) => x.kind === 'board');
      if (!culprits.length) culprits = batch.edits;
    }
    for (const x of batch.edits) {
      delete x.batchKey;
      if (culprits.includes(x)) x.rejected = why;
      this.dirty(x);
      const i = this.edits.findIndex((f) => f.afterSeq === x.seq);
      if (i >= 0) {
        const f = this.edits[i];
        carryBase(x, f);
        this.dirty(f);
        this.removeAt(this.edits.indexOf(x));
      }
    }
    if (e.status !== 403 || !m) return [];
    // Refused for who may change the row: later edits of the same row
    // would be refused too, so they go with it.
    const gone = this.edits.filter((x) => culprits.some((c) => c.kind === x.kind && c.id === x.id));
    gone.forEach((x) => this.removeAt(this.edits.indexOf(x)));
    return culprits;
  }

  /** retry sends a refused edit again; false when there is no such refused edit. */
  retry(seq: number): boolean {
    const e = this.edits.find((p) => p.seq === seq);
    if (!e?.rejected) return false;
    delete e.rejected;
    this.dirty(e);
    return true;
  }

  /** discard drops a refused edit; false when there is no such refused edit. */
  discard(seq: number): boolean {
    const i = this.edits.findIndex((p) => p.seq === seq && p.rejected);
    if (i < 0) return false;
    this.removeAt(i);
    return true;
  }

  /**
   * rebase keeps the queue on top of the server copy after rows arrived (a
   * pull, a live change, a reset; server already holds them): an unsent
   * upsert of a row that changed is merged onto the new row (base = its
   * old base, theirs = the new row, mine = the edit), and the new row
   * becomes its base. A row deleted on the server keeps its upsert: the
   * push brings it back. An edit on its way is left alone (it is shown
   * merged instead). Edits waiting for a version the copy has reached are
   * merged onto the row at it.
   */
  rebase(rows: readonly { kind: RowKind; row: Row }[], server: ServerCopy): void {
    if (rows.length) {
      const changed = new Map(rows.map((r) => [r.kind + ':' + r.row.id, r.row]));
      for (const e of this.edits) {
        if (e.kind === 'board' || e.op !== 'upsert' || !e.row || this.inFlight.has(e.seq) || waits(e)) continue;
        const r = changed.get(e.kind + ':' + e.id);
        if (!r || (e.base && e.baseVersion === r.version)) continue;
        this.mergeOnto(e, r);
        this.dirty(e);
      }
    }
    this.resolve(server);
  }

  /**
   * mergeOnto merges the unsent upsert e onto r, a newer server row, and
   * makes r its base. Where both changed the same lines the edit keeps its
   * old base: pushed on r, its lines would replace r's without the server
   * knowing, and r's lines would be lost; pushed on the old base, the
   * server sees the overlap, writes r's text to the note's changelog and
   * tells the person whose lines lost (docs/web-client.md, "The merge rule").
   */
  private mergeOnto(e: PendingEdit, r: Row) {
    if (!e.base) {
      e.base = r;
      e.baseVersion = r.version ?? 0;
      return;
    }
    const m = mergeRow(e.kind as RowKind, e.base, r, e.row!);
    e.row = strip(m.merged);
    if (!m.overlap) {
      e.base = r;
      e.baseVersion = r.version ?? 0;
    }
  }

  /** resolve merges the edits whose wait is over onto the server copy, and forgets landed pushes it holds. */
  private resolve(server: ServerCopy) {
    for (const e of this.edits) {
      if (e.kind === 'board' || e.afterSeq !== undefined || e.afterVersion === undefined || e.afterVersion > server.version) continue;
      const cur = server.row(e.kind, e.id);
      if (cur) {
        if (e.op === 'upsert' && e.row) this.mergeOnto(e, cur);
        else {
          e.base = cur;
          e.baseVersion = cur.version ?? 0;
        }
      } else {
        // Deleted since: the edit brings the row back, starting from the
        // row at that version.
        e.baseVersion = e.afterVersion;
      }
      delete e.afterVersion;
      this.dirty(e);
    }
    if (this.landed.length) this.landed = this.landed.filter((l) => l.version > server.version);
  }

  /** row is one row as the user sees it: the server copy with the queue on top (undefined: none or deleted). */
  row(kind: RowKind, id: string, server: ServerCopy): Row | undefined {
    let cur = server.row(kind, id);
    for (const l of this.landed) if (l.version > server.version && l.edit.kind === kind && l.edit.id === id) cur = this.show(kind, l.edit, cur);
    for (const e of this.edits) if (e.kind === kind && e.id === id) cur = this.show(kind, e, cur);
    return cur;
  }

  /**
   * overlay puts the queue on top of copies of the server's rows, and
   * returns the board's name with a pending rename applied.
   */
  overlay(rows: Record<RowKind, Map<string, Row>>, name: string, server: ServerCopy): string {
    const apply = (e: PendingEdit) => {
      if (e.kind === 'board') {
        name = e.name ?? name;
        return;
      }
      const m = rows[e.kind];
      const r = this.show(e.kind, e, m.get(e.id));
      if (r) m.set(e.id, r);
      else m.delete(e.id);
    };
    for (const l of this.landed) if (l.version > server.version) apply(l.edit);
    this.edits.forEach(apply);
    return name;
  }

  /** show is the row after the edit e, on top of cur (the row as shown below it). */
  private show(kind: RowKind, e: PendingEdit, cur: Row | undefined): Row | undefined {
    if (e.op === 'delete') return undefined;
    if (!e.row) return cur;
    if (waits(e)) return cur && e.base ? mergeRow(kind, e.base, cur, e.row).merged : e.row;
    return stored(kind, e, cur);
  }

  /** takeWrites returns what changed since the last call, for the local store. */
  takeWrites(): { put: PendingEdit[]; del: number[] } {
    const out = { put: [...this.puts.values()], del: [...this.dels] };
    this.puts.clear();
    this.dels.clear();
    return out;
  }

  private dirty(e: PendingEdit) {
    if (!this.dels.has(e.seq)) this.puts.set(e.seq, e);
  }

  private removeAt(i: number) {
    const [e] = this.edits.splice(i, 1);
    this.puts.delete(e.seq);
    this.dels.add(e.seq);
  }
}
