// Undo and redo, per person and per field (docs/web-client.md, "Undo and
// redo"). One UndoHistory per open board, made by BoardScreen and shared by
// the canvas (its own edits, Ctrl+Z, Ctrl+Shift+Z / Ctrl+Y and the buttons),
// the work items panel and the AI chat (one step per AI turn).
//
// A step records, per row, the fields this person changed with their value
// before and after. Undo applies the inverse on top of the row as it is now,
// so what others did since stays: a field still holding my "after" goes
// back to "before"; a text field others edited since is reverted line by
// line (mergeText(base = my after, theirs = now, mine = my before)); a field
// someone else has since replaced keeps theirs. Redo is the same rule the
// other way. Plain TypeScript: the store is anything with a SyncClient's
// edit methods.
import type { Connector, Frame, Note, TrackerItem } from '../api/types';
import { mergeRow, mergeText, type Kind, type Row } from '../sync/merge';

/** Table names the kind of a row a step changed. */
export type Table = Kind;

/** UndoStore is what the history edits through: a SyncClient fits. */
export interface UndoStore {
  getSnapshot(): { notes: ReadonlyMap<string, Note>; items: ReadonlyMap<string, TrackerItem>; connectors: ReadonlyMap<string, Connector>; frames: ReadonlyMap<string, Frame> };
  /** upsertNote queues a note; base: the row the edit began on, when older than the copy (SyncClient.upsertNote). */
  upsertNote(n: Note, base?: Note): Note;
  deleteNote(id: string): void;
  /** upsertItem queues an item; base as for upsertNote (SyncClient.upsertItem). */
  upsertItem(i: TrackerItem, base?: TrackerItem): TrackerItem;
  deleteItem(id: string): void;
  /** upsertConnector and upsertFrame queue a row; base as for upsertNote. */
  upsertConnector(c: Connector, base?: Connector): Connector;
  deleteConnector(id: string): void;
  upsertFrame(f: Frame, base?: Frame): Frame;
  deleteFrame(id: string): void;
  batch(fn: () => void): void;
}

/** FieldChange is one field's value before and after a step (undefined: absent). */
export interface FieldChange {
  before: unknown;
  after: unknown;
}

/** RowChange is what one step did to one row. */
export interface RowChange {
  table: Table;
  id: string;
  /** before is the row before the step: null when the step created it. */
  before: Row | null;
  /** after is the row after the step: null when the step deleted it. */
  after: Row | null;
  /** fields are the fields the step changed while the row existed ("pos" is x and y together). */
  fields: Map<string, FieldChange>;
}

/** Step is one undoable action: what the person hears ("Undid the <label>.") and the rows it changed. */
export interface Step {
  label: string;
  rows: Map<string, RowChange>;
}

/** UNDO_LIMIT is how many steps each stack keeps; older ones are forgotten. */
export const UNDO_LIMIT = 100;

/** UndoResult is what undo() and redo() did. */
export type UndoResult =
  | { kind: 'empty' }
  | { kind: 'done'; label: string }
  /**
   * confirm: the step would delete notes others have changed since; nothing
   * is done until the person chooses proceed() (delete them anyway) or
   * keep() (nothing is done and the step is dropped).
   */
  | { kind: 'confirm'; label: string; title: string; text: string; proceed: () => UndoResult; keep: () => void };

// Fields that are the server's or the sync engine's, never a person's change.
// createdBy is the server's (docs/api.md, "Locks and roles"): its arrival is nobody's change.
const NOT_FIELDS = new Set(['id', 'updatedAt', 'version', 'deletedAt', 'baseVersion', 'createdBy']);
/** Text fields revert line by line; every other field is one value. */
const TEXT_FIELDS: Record<Table, ReadonlySet<string>> = { note: new Set(['title', 'content']), item: new Set(['summary', 'description']), connector: new Set(), frame: new Set() };
/** Tables whose rows have a position (x and y, one field "pos") and a size (w and h, one field "size"). */
const PLACED = new Set<Table>(['note', 'frame']);
/** An item's optional fields: absent and "" are one value, as in the merge. */
const ITEM_OPTIONAL = new Set(['description', 'status', 'parentId']);

const rowKey = (table: Table, id: string) => table + ':' + id;

/** fieldKeys lists the fields of a row a person can change ("pos" for x and y). */
function fieldKeys(table: Table, row: Row): string[] {
  const out: string[] = [];
  for (const k of Object.keys(row)) {
    if (NOT_FIELDS.has(k)) continue;
    if (PLACED.has(table) && (k === 'x' || k === 'y')) {
      if (!out.includes('pos')) out.push('pos');
    } else out.push(k);
  }
  return out;
}

/** fieldValue is a field's value in a row ("pos" is [x, y]). */
export function fieldValue(table: Table, row: Row, k: string): unknown {
  if (k === 'pos' && PLACED.has(table)) return [(row as Note).x, (row as Note).y];
  const v = (row as Record<string, unknown>)[k];
  if (table === 'item' && ITEM_OPTIONAL.has(k)) return v ?? '';
  return v;
}

/** withField is row with one field set (undefined, or "" for an item's optional field, removes it). */
function withField(table: Table, row: Row, k: string, v: unknown): Row {
  const out = { ...row } as Record<string, unknown>;
  if (k === 'pos' && PLACED.has(table)) {
    const [x, y] = v as [number, number];
    out.x = x;
    out.y = y;
  } else if (v === undefined || (table === 'item' && ITEM_OPTIONAL.has(k) && v === '')) delete out[k];
  else out[k] = v;
  return out as Row;
}

/** same compares two field values by their JSON (extra fields are any JSON). */
export function same(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined) return false;
  return JSON.stringify(a) === JSON.stringify(b);
}

/** changedFields lists the fields whose values differ between two versions of a row. */
export function changedFields(table: Table, a: Row, b: Row): string[] {
  const keys = new Set([...fieldKeys(table, a), ...fieldKeys(table, b)]);
  return [...keys].filter((k) => !same(fieldValue(table, a, k), fieldValue(table, b, k)));
}

/**
 * revertField is the value a field takes when a change from `from` to `to`
 * is applied on top of `cur`, the value now: `to` when the field still holds
 * `from`; for a text field others edited since, their lines with mine
 * changed back (mergeText(from, cur, to)) unless their change touched the
 * same lines; otherwise `cur` (someone else replaced it: theirs stays).
 */
export function revertField(table: Table, k: string, from: unknown, to: unknown, cur: unknown): unknown {
  if (same(cur, from)) return to;
  if (TEXT_FIELDS[table].has(k) && typeof from === 'string' && typeof to === 'string' && typeof cur === 'string') {
    const m = mergeText(from, cur, to);
    if (!m.overlap) return m.merged;
  }
  return cur;
}

/**
 * applyFields applies a step's field changes to `cur` in one direction
 * (undo: after → before; redo: before → after) and returns the new row, or
 * null when nothing would change.
 */
export function applyFields(table: Table, cur: Row, fields: ReadonlyMap<string, FieldChange>, dir: 'undo' | 'redo'): Row | null {
  let next = cur;
  for (const [k, c] of fields) {
    const [from, to] = dir === 'undo' ? [c.after, c.before] : [c.before, c.after];
    if (same(from, to)) continue;
    const now = fieldValue(table, next, k);
    const v = revertField(table, k, from, to, now);
    if (!same(v, now)) next = withField(table, next, k, v);
  }
  return next === cur ? null : next;
}

/** StepRecorder makes edits through the store and records them in one step. */
export interface StepRecorder {
  /** upsertNote: base is the row the edit began on (an editor open while others changed the note). */
  upsertNote(n: Note, base?: Note): Note;
  deleteNote(id: string): void;
  /** upsertItem: base is the row the edit began on (the work item form open while others changed the item). */
  upsertItem(i: TrackerItem, base?: TrackerItem): TrackerItem;
  deleteItem(id: string): void;
  upsertConnector(c: Connector, base?: Connector): Connector;
  deleteConnector(id: string): void;
  upsertFrame(f: Frame, base?: Frame): Frame;
  deleteFrame(id: string): void;
}

/**
 * UndoHistory holds one person's undo and redo stacks for a board. Edits
 * made through transact() or a recorder from begin() become steps; undo()
 * and redo() apply them on top of the board as it is now, in one batch (one
 * push). A new step empties the redo stack.
 */
export class UndoHistory {
  private readonly undos: Step[] = [];
  private readonly redos: Step[] = [];
  private readonly cbs = new Set<() => void>();

  constructor(private readonly store: UndoStore) {}

  /** onChange tells cb when the stacks change (for the buttons); returns the unsubscribe. */
  onChange(cb: () => void): () => void {
    this.cbs.add(cb);
    return () => this.cbs.delete(cb);
  }

  get canUndo(): boolean {
    return this.undos.length > 0;
  }

  get canRedo(): boolean {
    return this.redos.length > 0;
  }

  /** size is how many steps can be undone. */
  get size(): number {
    return this.undos.length;
  }

  /** transact makes the edits of fn in one batch and records them as one step. */
  transact(label: string, fn: (r: StepRecorder) => void): void {
    const r = this.begin(label);
    this.store.batch(() => fn(r));
  }

  /**
   * begin starts a step whose edits are made over time (an AI turn): the
   * step goes on the undo stack with its first change, and later edits
   * join it while it is there; once undone (or dropped), the next edit
   * starts a new step.
   */
  begin(label: string): StepRecorder {
    let step: Step = { label, rows: new Map() };
    let pushed = false;
    const record = (table: Table, id: string, prev: Row | undefined, next: Row | null) => {
      if (pushed && !this.undos.includes(step)) {
        step = { label, rows: new Map() };
        pushed = false;
      }
      if (!record1(step, table, id, prev, next)) return;
      if (!pushed) {
        pushed = true;
        this.push(step);
      }
      else if (this.redos.length) {
        // A new change: what was undone before it can no longer be redone.
        this.redos.length = 0;
        this.changed();
      }
    };
    const upsert = <T extends Row>(table: Table, r: T, base: T | undefined): T => {
      const prev = this.current(table, r.id);
      const row = this.write(table, r, base) as T;
      // Made on an older base: what I changed is what the merge onto the row now changes.
      record(table, r.id, prev, base && prev ? mergeRow(table, base, prev, row).merged : row);
      return row;
    };
    const del = (table: Table, id: string) => {
      const prev = this.current(table, id);
      this.remove(table, id);
      record(table, id, prev, null);
    };
    return {
      upsertNote: (n, base) => upsert('note', n, base),
      deleteNote: (id) => del('note', id),
      upsertItem: (i, base) => upsert('item', i, base),
      deleteItem: (id) => del('item', id),
      upsertConnector: (c, base) => upsert('connector', c, base),
      deleteConnector: (id) => del('connector', id),
      upsertFrame: (f, base) => upsert('frame', f, base),
      deleteFrame: (id) => del('frame', id),
    };
  }

  private push(step: Step) {
    this.undos.push(step);
    if (this.undos.length > UNDO_LIMIT) this.undos.shift();
    this.redos.length = 0;
    this.changed();
  }

  /** undo reverts the newest step on top of the board as it is now. */
  undo(): UndoResult {
    return this.run('undo');
  }

  /** redo applies again the step undone last, the same way. */
  redo(): UndoResult {
    return this.run('redo');
  }

  private run(dir: 'undo' | 'redo'): UndoResult {
    const from = dir === 'undo' ? this.undos : this.redos;
    const step = from.at(-1);
    if (!step) return { kind: 'empty' };
    const asks = this.othersChanged(step, dir);
    if (asks.length) {
      const n = asks.length;
      const nouns = new Set(asks.map((rc) => NOUN[rc.table]));
      const noun = nouns.size === 1 ? [...nouns][0] : 'row';
      const these = n === 1 ? `this ${noun}` : `these ${n} ${noun}s`;
      return {
        kind: 'confirm',
        label: step.label,
        title: `Delete ${these}?`,
        text: `Others have changed ${n === 1 ? `this ${noun}` : `these ${noun}s`} since you ${dir === 'undo' ? 'created' : 'brought back'} ${n === 1 ? 'it' : 'them'}.`,
        proceed: () => (from.includes(step) ? this.apply(step, dir) : { kind: 'empty' }),
        keep: () => {
          const i = from.indexOf(step);
          if (i >= 0) from.splice(i, 1);
          this.changed();
        },
      };
    }
    return this.apply(step, dir);
  }

  /** othersChanged lists the rows the step would delete that others have changed since. */
  private othersChanged(step: Step, dir: 'undo' | 'redo'): RowChange[] {
    const out: RowChange[] = [];
    for (const rc of step.rows.values()) {
      const from = dir === 'undo' ? rc.after : rc.before;
      const to = dir === 'undo' ? rc.before : rc.after;
      if (!from || to) continue;
      const cur = this.current(rc.table, rc.id);
      if (cur && changedFields(rc.table, from, cur).length) out.push(rc);
    }
    return out;
  }

  private current(table: Table, id: string): Row | undefined {
    return rowsOf(this.store.getSnapshot(), table).get(id);
  }

  /** apply makes the step's edits in one direction, in one batch, and moves it to the other stack. */
  private apply(step: Step, dir: 'undo' | 'redo'): UndoResult {
    const s = this.store.getSnapshot();
    this.store.batch(() => {
      for (const rc of step.rows.values()) {
        const cur = rowsOf(s, rc.table).get(rc.id);
        const from = dir === 'undo' ? rc.after : rc.before;
        const to = dir === 'undo' ? rc.before : rc.after;
        if (from && !to) {
          // Delete it. The other way brings it back as it was when deleted,
          // others' changes included.
          if (!cur) continue;
          if (dir === 'undo') rc.after = cur;
          else rc.before = cur;
          this.remove(rc.table, rc.id);
        } else if (!from && to) {
          // Bring it back, as it was (merged over nothing); already back: leave it.
          if (cur) continue;
          this.write(rc.table, to);
        } else if (from && to && cur) {
          // A row someone deleted since stays deleted.
          const next = applyFields(rc.table, cur, rc.fields, dir);
          if (next) this.write(rc.table, next);
        }
      }
    });
    const [a, b] = dir === 'undo' ? [this.undos, this.redos] : [this.redos, this.undos];
    const i = a.indexOf(step);
    if (i >= 0) a.splice(i, 1);
    b.push(step);
    if (b.length > UNDO_LIMIT) b.shift();
    this.changed();
    return { kind: 'done', label: step.label };
  }

  private write(table: Table, row: Row, base?: Row): Row {
    const st = this.store;
    switch (table) {
      case 'note':
        return base ? st.upsertNote(row as Note, base as Note) : st.upsertNote(row as Note);
      case 'item':
        return base ? st.upsertItem(row as TrackerItem, base as TrackerItem) : st.upsertItem(row as TrackerItem);
      case 'connector':
        return base ? st.upsertConnector(row as Connector, base as Connector) : st.upsertConnector(row as Connector);
      case 'frame':
        return base ? st.upsertFrame(row as Frame, base as Frame) : st.upsertFrame(row as Frame);
    }
  }

  private remove(table: Table, id: string) {
    const st = this.store;
    if (table === 'note') st.deleteNote(id);
    else if (table === 'item') st.deleteItem(id);
    else if (table === 'connector') st.deleteConnector(id);
    else st.deleteFrame(id);
  }

  private changed() {
    this.cbs.forEach((cb) => cb());
  }
}

/** NOUN is what a person calls a row of each table. */
const NOUN: Record<Table, string> = { note: 'note', item: 'work item', connector: 'connector', frame: 'frame' };

/** rowsOf is one table of a store's snapshot. */
function rowsOf(s: ReturnType<UndoStore['getSnapshot']>, table: Table): ReadonlyMap<string, Row> {
  switch (table) {
    case 'note':
      return s.notes;
    case 'item':
      return s.items;
    case 'connector':
      return s.connectors;
    case 'frame':
      return s.frames;
  }
}

/**
 * record1 adds one edit of a row (prev: the row before it, next: after it,
 * null when deleted) to a step; true when the step now changes anything.
 */
function record1(step: Step, table: Table, id: string, prev: Row | undefined, next: Row | null): boolean {
  const k = rowKey(table, id);
  let rc = step.rows.get(k);
  if (!rc) {
    if (!prev && !next) return isEffective(step);
    rc = { table, id, before: prev ?? null, after: prev ?? null, fields: new Map() };
    step.rows.set(k, rc);
  }
  if (prev && next) {
    for (const f of changedFields(table, prev, next)) {
      const c = rc.fields.get(f);
      if (c) c.after = fieldValue(table, next, f);
      else rc.fields.set(f, { before: fieldValue(table, prev, f), after: fieldValue(table, next, f) });
    }
  }
  rc.after = next;
  return isEffective(step);
}

/** isEffective says whether a step changes anything (a save that changed nothing is no step). */
function isEffective(step: Step): boolean {
  for (const rc of step.rows.values()) {
    if (!rc.before !== !rc.after) return true;
    if (rc.before && rc.after) for (const c of rc.fields.values()) if (!same(c.before, c.after)) return true;
  }
  return false;
}
