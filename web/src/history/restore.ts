// Planning a board restore: what applying a past board (a snapshot) to the
// board as it is now would add, change and remove. The plan is applied as
// normal pushes through the sync client, so others see it live and it is
// logged like any edit.
import type { BoardState, Note, TrackerItem } from '../api/types';

/**
 * Fields that say when and in which version, not what, and those the
 * Markdown formats do not keep (locked, createdBy: the server's, docs/api.md
 * "Locks and roles"; a restore's push keeps them as stored): a restore does
 * not compare them.
 */
const META = new Set(['updatedAt', 'version', 'deletedAt', 'locked', 'createdBy']);

/** same reports whether two rows hold the same things (field order and meta fields aside). */
export function same(a: object, b: object): boolean {
  const norm = (r: object) =>
    JSON.stringify(
      Object.entries(r)
        .filter(([k, v]) => !META.has(k) && v !== undefined)
        .sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)),
    );
  return norm(a) === norm(b);
}

export interface RowPlan<T> {
  add: T[];
  change: T[];
  remove: string[];
}

export interface RestorePlan {
  notes: RowPlan<Note>;
  items: RowPlan<TrackerItem>;
  /** rename is the past name when it differs from the name now. */
  rename: string | null;
}

function planRows<T extends { id: string }>(now: ReadonlyMap<string, T>, past: T[]): RowPlan<T> {
  const plan: RowPlan<T> = { add: [], change: [], remove: [] };
  const pastIds = new Set(past.map((r) => r.id));
  for (const r of past) {
    const cur = now.get(r.id);
    if (!cur) plan.add.push(r);
    else if (!same(cur, r)) plan.change.push(r);
  }
  for (const id of now.keys()) if (!pastIds.has(id)) plan.remove.push(id);
  return plan;
}

/** planRestore compares the board now with a past one. */
export function planRestore(now: { notes: ReadonlyMap<string, Note>; items: ReadonlyMap<string, TrackerItem>; name: string }, past: BoardState): RestorePlan {
  return {
    notes: planRows(now.notes, past.notes),
    items: planRows(now.items, past.trackerItems),
    rename: past.board.name && past.board.name !== now.name ? past.board.name : null,
  };
}

const count = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** describePlan says in words what a restore will do. */
export function describePlan(p: RestorePlan): string {
  const parts: string[] = [];
  const rows = (r: RowPlan<unknown>, one: string, many: string) => {
    if (r.add.length) parts.push(`add ${count(r.add.length, one, many)}`);
    if (r.change.length) parts.push(`change ${count(r.change.length, one, many)}`);
    if (r.remove.length) parts.push(`remove ${count(r.remove.length, one, many)}`);
  };
  rows(p.notes, 'note', 'notes');
  rows(p.items, 'work item', 'work items');
  if (p.rename !== null) parts.push(`rename the board to "${p.rename}"`);
  if (!parts.length) return 'The board already equals this snapshot: nothing will change.';
  return `This will ${parts.join(', ')}.`;
}

/** Editor is the sync client as a restore sees it. */
export interface Editor {
  batch(fn: () => void): void;
  upsertNote(n: Note): unknown;
  deleteNote(id: string): void;
  upsertItem(i: TrackerItem): unknown;
  deleteItem(id: string): void;
  rename(name: string): void;
}

/** applyPlan applies a restore as normal edits, in one batch. */
export function applyPlan(c: Editor, p: RestorePlan): void {
  c.batch(() => {
    [...p.notes.add, ...p.notes.change].forEach((n) => c.upsertNote(n));
    p.notes.remove.forEach((id) => c.deleteNote(id));
    [...p.items.add, ...p.items.change].forEach((i) => c.upsertItem(i));
    p.items.remove.forEach((id) => c.deleteItem(id));
    if (p.rename !== null) c.rename(p.rename);
  });
}
