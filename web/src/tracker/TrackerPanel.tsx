import { lazy, Suspense, useId, useState, type FormEvent } from 'react';
import type { TrackerItem } from '../api/types';
import type { SyncClient } from '../sync/client';
import { randomId } from '../boards/ids';
import { nextKeys } from './keys';
import type { StepRecorder, UndoHistory } from '../canvas/undo';

// The AI parts, loaded when first opened: the board opens without them.
const TrackerGenerate = lazy(() => import('../ai/TrackerGenerate'));
const Analyse = lazy(() => import('../ai/Analyse'));

export const ITEM_TYPES = ['epic', 'story', 'task', 'bug', 'subtask'] as const;
export const ITEM_STATUSES = ['todo', 'in-progress', 'done'] as const;

/** TrackerPanel lists, creates, edits and deletes tracker work items; each change is a step of the board's undo history. */
export function TrackerPanel({ client, items, canEdit, undo }: { client: SyncClient; items: ReadonlyMap<string, TrackerItem>; canEdit: boolean; undo?: UndoHistory }) {
  const [editing, setEditing] = useState<TrackerItem | null>(null);
  const change = (label: string, fn: (r: StepRecorder) => void) => (undo ? undo.transact(label, fn) : client.batch(() => fn(client)));
  // The form's edit is made on the item as it was when the form opened: fields
  // others changed meanwhile, and the form did not touch, keep their values.
  const saveItem = (i: TrackerItem) =>
    change(items.has(i.id) ? `edit of ${i.key}` : `new work item ${i.key}`, (r) => (editing?.id === i.id && editing.version ? r.upsertItem(i, editing) : r.upsertItem(i)));
  const [generating, setGenerating] = useState(false);
  const list = [...items.values()].sort((a, b) => (a.key ?? '').localeCompare(b.key ?? '', undefined, { numeric: true }));

  function create() {
    setEditing({ id: randomId(), key: nextKeys(items.values(), 1)[0], type: 'task', summary: '', status: 'todo', updatedAt: '' });
  }

  return (
    <aside className="tracker" aria-labelledby="tracker-title">
      <div className="row">
        <h2 id="tracker-title">Work items</h2>
        {canEdit && (
          <button type="button" onClick={create}>
            + Item
          </button>
        )}
        {canEdit && (
          <button type="button" onClick={() => setGenerating(true)}>
            Generate
          </button>
        )}
      </div>
      {generating && (
        <Suspense fallback={<p role="status">Loading…</p>}>
          <TrackerGenerate client={client} items={items} onClose={() => setGenerating(false)} />
        </Suspense>
      )}
      {editing && (
        <ItemForm
          item={editing}
          items={items}
          readOnly={!canEdit}
          boardId={client.boardId}
          onApply={saveItem}
          onSave={(i) => {
            saveItem(i);
            setEditing(null);
          }}
          onCancel={() => setEditing(null)}
        />
      )}
      {list.length === 0 ? (
        <p className="muted">No work items yet.</p>
      ) : (
        <ul className="plain items">
          {list.map((i) => (
            <li key={i.id}>
              <button type="button" className="item-open" onClick={() => setEditing(i)} aria-label={`${i.key} ${i.summary || 'no summary'}: open`}>
                <strong>{i.key}</strong> <span className="badge">{i.type}</span> {i.status && <span className="badge">{i.status}</span>}
                <span className="item-summary">{i.summary || <em>No summary</em>}</span>
              </button>
              {canEdit && (
                <button type="button" onClick={() => change(`deletion of ${i.key}`, (r) => r.deleteItem(i.id))} aria-label={`Delete ${i.key}`}>
                  Delete
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
    </aside>
  );
}

function ItemForm({ item, items, readOnly, boardId, onApply, onSave, onCancel }: { item: TrackerItem; items: ReadonlyMap<string, TrackerItem>; readOnly: boolean; boardId: string; onApply: (i: TrackerItem) => void; onSave: (i: TrackerItem) => void; onCancel: () => void }) {
  const [v, setV] = useState(item);
  const [analysing, setAnalysing] = useState(false);
  const id = useId();
  const set = (k: keyof TrackerItem) => (e: { target: { value: string } }) => setV({ ...v, [k]: e.target.value });
  const types = (ITEM_TYPES as readonly string[]).includes(v.type) ? ITEM_TYPES : [...ITEM_TYPES, v.type];
  const statuses = !v.status || (ITEM_STATUSES as readonly string[]).includes(v.status) ? ITEM_STATUSES : [...ITEM_STATUSES, v.status];

  function submit(e: FormEvent) {
    e.preventDefault();
    if (readOnly) return;
    // Fields this form does not know stay as they were (spread of the original).
    const out: TrackerItem = { ...item, ...v };
    for (const k of ['description', 'status', 'parentId'] as const) if (!out[k]) delete out[k];
    onSave(out);
  }

  return (
    <form className="card item-form" onSubmit={submit} aria-label={`Work item ${item.key}`}>
      <label htmlFor={id + 'k'}>Key</label>
      <input id={id + 'k'} value={v.key} maxLength={64} required readOnly={readOnly} onChange={set('key')} />
      <label htmlFor={id + 't'}>Type</label>
      <select id={id + 't'} value={v.type} disabled={readOnly} onChange={set('type')}>
        {types.map((t) => (
          <option key={t}>{t}</option>
        ))}
      </select>
      <label htmlFor={id + 'st'}>Status</label>
      <select id={id + 'st'} value={v.status ?? ''} disabled={readOnly} onChange={set('status')}>
        {statuses.map((t) => (
          <option key={t}>{t}</option>
        ))}
      </select>
      <label htmlFor={id + 's'}>Summary</label>
      <input id={id + 's'} value={v.summary} maxLength={1000} readOnly={readOnly} onChange={set('summary')} />
      <label htmlFor={id + 'd'}>Description</label>
      <textarea id={id + 'd'} value={v.description ?? ''} rows={4} readOnly={readOnly} onChange={set('description')} />
      <label htmlFor={id + 'p'}>Parent</label>
      <select id={id + 'p'} value={v.parentId ?? ''} disabled={readOnly} onChange={set('parentId')}>
        <option value="">None</option>
        {[...items.values()]
          .filter((i) => i.id !== item.id)
          .map((i) => (
            <option key={i.id} value={i.id}>
              {i.key} {i.summary}
            </option>
          ))}
        {v.parentId && !items.has(v.parentId) && <option value={v.parentId}>{v.parentId}</option>}
      </select>
      <div className="row">
        {!readOnly && (
          <button type="submit" className="primary">
            Save
          </button>
        )}
        <button type="button" onClick={onCancel}>
          {readOnly ? 'Close' : 'Cancel'}
        </button>
        {!readOnly && (
          <button type="button" onClick={() => setAnalysing(true)} disabled={!v.summary.trim() && !v.description?.trim()}>
            Analyse
          </button>
        )}
      </div>
      {analysing && (
        <Suspense fallback={<p role="status">Loading the analysis…</p>}>
          <Analyse
            target={{ kind: 'item', boardId, item: { ...item, ...v }, parent: v.parentId ? items.get(v.parentId) : undefined }}
            // An applied rewrite is saved at once (pushed like any edit); the form shows it.
            onApply={(field, value) => {
              const next = { ...v, [field]: value };
              setV(next);
              onApply({ ...item, ...next });
            }}
            onClose={() => setAnalysing(false)}
          />
        </Suspense>
      )}
    </form>
  );
}
