// Tracker generation (issue 12): the tracker/generate request and how its
// answer becomes tracker items. docs/web-client.md, "AI (issue 12)" →
// "Tracker generation", holds the decisions.
import type { Note, TrackerItem } from '../api/types';
import { nextKeys } from '../tracker/keys';
import { boardItem, cut } from './boardContext';
import { plural } from './errors';

export type GenerateMode = 'generate_step' | 'generate_children' | 'regenerate_items';
export type Step = 'epic' | 'story' | 'task';
export const STEPS: readonly Step[] = ['epic', 'story', 'task'];

/** Server limits (ai/requests.go). */
export const MAX_GENERATED = 20;
export const MAX_PROMPT = 10_000;

/** GenerateForm is what the user chose in the dialog. */
export interface GenerateForm {
  mode: GenerateMode;
  step: Step;
  parentId: string;
  itemIds: string[];
  instruction: string;
  context: string;
  /** count: 0 lets the model choose. */
  count: number;
}

/** GeneratedItem is one proposed item of the answer. */
export interface GeneratedItem {
  type: string;
  summary: string;
  description: string;
  parentId: string;
  replacesId?: string;
}

/** TrackerGeneration is tracker/generate's answer. */
export interface TrackerGeneration {
  items: GeneratedItem[];
  recommendedNextStep: { step: string; reason: string };
}

// The server reads at most 100 notes, 800 characters of each, and 300
// items' summaries (ai/endpoints.go): sending more only costs bytes.
const CONTEXT_NOTES = 100;
const NOTE_CHARS = 800;

/** formProblem is why the form cannot be sent, or ''. */
export function formProblem(f: GenerateForm, items: ReadonlyMap<string, TrackerItem>): string {
  if (f.mode === 'generate_children' && !items.has(f.parentId)) return 'Choose the item to break down.';
  if (f.mode === 'regenerate_items') {
    if (f.itemIds.length === 0) return 'Choose at least one item to regenerate.';
    if (f.itemIds.length > MAX_GENERATED) return `Choose at most ${MAX_GENERATED} items to regenerate.`;
  }
  if ([...f.instruction].length > MAX_PROMPT) return `The instruction may have at most ${MAX_PROMPT.toLocaleString('en')} characters.`;
  if ([...f.context].length > MAX_PROMPT) return `The context may have at most ${MAX_PROMPT.toLocaleString('en')} characters.`;
  return '';
}

/** generateRequest builds tracker/generate's body for the form. */
export function generateRequest(boardId: string, f: GenerateForm, items: ReadonlyMap<string, TrackerItem>, notes: ReadonlyMap<string, Note>) {
  const body: Record<string, unknown> = {
    boardId,
    mode: f.mode,
    items: [...items.values()].map((i) => boardItem(i)),
    notes: [...notes.values()]
      .filter((n) => !n.deletedAt)
      .sort((a, b) => a.y - b.y || a.x - b.x)
      .slice(0, CONTEXT_NOTES)
      .map((n) => ({ id: n.id, title: n.title, content: cut(n.content, NOTE_CHARS), color: n.color, type: n.type })),
  };
  if (f.mode === 'generate_step') body.step = f.step;
  if (f.mode === 'generate_children') body.parentId = f.parentId;
  if (f.mode === 'regenerate_items') body.itemIds = f.itemIds;
  if (f.instruction.trim()) body.instruction = f.instruction.trim();
  if (f.context.trim()) body.context = f.context.trim();
  if (f.count > 0) body.count = Math.min(MAX_GENERATED, Math.floor(f.count));
  return body;
}

/** Planned is one proposal with what accepting it does. */
export interface Planned {
  proposal: GeneratedItem;
  /** replaces: the existing item it overwrites in place (regenerate_items), if any. */
  replaces?: TrackerItem;
}

/**
 * plan pairs each proposal with the item it replaces. A replacement
 * overwrites its item in place; a second proposal naming an item already
 * replaced by an earlier one, and any proposal naming no item, is added as
 * a new item.
 */
export function plan(g: TrackerGeneration, items: ReadonlyMap<string, TrackerItem>): Planned[] {
  const taken = new Set<string>();
  return g.items.map((p) => {
    const old = p.replacesId ? items.get(p.replacesId) : undefined;
    if (old && !taken.has(old.id)) {
      taken.add(old.id);
      return { proposal: p, replaces: old };
    }
    return { proposal: p };
  });
}

/**
 * acceptedItems turns the picked proposals into rows to upsert. A
 * replacement keeps the replaced item's id, key, status, type and parent
 * (children and links stay attached) and takes the new summary and
 * description. A new item gets a fresh id, the next key, status "todo",
 * the proposed type and parent (when that parent still exists); so does a
 * replacement whose item was deleted since the preview.
 */
export function acceptedItems(picked: readonly Planned[], items: ReadonlyMap<string, TrackerItem>, newId: () => string): TrackerItem[] {
  // items is the tracker now: an item edited since the preview keeps its
  // edits (status, parent…), and one deleted since is not brought back.
  const current = (p: Planned) => (p.replaces ? items.get(p.replaces.id) : undefined);
  const keys = nextKeys(items.values(), picked.filter((p) => !current(p)).length);
  let k = 0;
  return picked.map((pl) => {
    const p = pl.proposal;
    const replaces = current(pl);
    if (replaces) {
      const row: TrackerItem = { ...replaces, summary: p.summary, description: p.description };
      if (!row.description) delete row.description;
      return row;
    }
    const row: TrackerItem = { id: newId(), key: keys[k++], type: p.type || 'task', summary: p.summary, status: 'todo', updatedAt: '' };
    if (p.description) row.description = p.description;
    if (p.parentId && items.has(p.parentId)) row.parentId = p.parentId;
    return row;
  });
}

/** STEP_LABELS name the recommended next step for people. */
export const STEP_LABELS: Record<string, string> = {
  epic: 'Generate epics',
  story: 'Generate stories',
  task: 'Generate tasks',
  done: 'Nothing more to generate',
};

/** actionLabel names the add button: "Add 3 items", "Replace 2 items", "Replace 1 and add 2 items". */
export function actionLabel(added: number, replaced: number): string {
  if (replaced === 0) return `Add ${plural(added, 'item')}`;
  if (added === 0) return `Replace ${plural(replaced, 'item')}`;
  return `Replace ${replaced} and add ${plural(added, 'item')}`;
}
