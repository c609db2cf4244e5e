import { useId, useMemo, useState } from 'react';
import type { Frame, Note, TrackerItem } from '../api/types';
import { Dialog } from '../app/Dialog';
import { search, type SearchResult } from './search';

interface Props {
  notes: ReadonlyMap<string, Note>;
  items: ReadonlyMap<string, TrackerItem>;
  /** frames are searched by title (issue 24). */
  frames?: ReadonlyMap<string, Frame>;
  /** onFrame zooms to a frame (Editor.zoomToFrame). */
  onFrame?: (id: string) => void;
  /** onNote jumps to a note (Editor.jumpTo). */
  onNote: (id: string) => void;
  /** onItem shows a work item (its panel); without it work items are listed but not opened. */
  onItem?: (id: string) => void;
  onClose: () => void;
}

/**
 * SearchPanel searches titles, contents and work items as the person
 * types; the arrow keys move through the results (a listbox the field
 * controls) and Enter, or a click, jumps to one.
 */
export function SearchPanel({ notes, items, frames, onNote, onFrame, onItem, onClose }: Props) {
  const [q, setQ] = useState('');
  const [active, setActive] = useState(0);
  const ids = { field: useId(), list: useId() };
  const results = useMemo(() => search(q, notes.values(), items.values(), undefined, frames?.values()), [q, notes, items, frames]);
  const at = Math.min(active, Math.max(0, results.length - 1));
  const pick = (r: SearchResult | undefined) => {
    if (!r) return;
    if (r.kind === 'note') onNote(r.id);
    else if (r.kind === 'frame') onFrame?.(r.id);
    else {
      onItem?.(r.id);
      onClose();
    }
  };
  const optionId = (i: number) => `${ids.list}-${i}`;
  return (
    <Dialog title="Search" onClose={onClose}>
      <div className="search-panel">
        <label htmlFor={ids.field}>Search notes and work items</label>
        <input
          id={ids.field}
          type="search"
          value={q}
          data-autofocus
          role="combobox"
          aria-expanded={results.length > 0}
          aria-controls={ids.list}
          aria-activedescendant={results.length ? optionId(at) : undefined}
          aria-autocomplete="list"
          onChange={(e) => {
            setQ(e.target.value);
            setActive(0);
          }}
          onKeyDown={(e) => {
            if (e.key === 'ArrowDown') setActive(Math.min(at + 1, results.length - 1));
            else if (e.key === 'ArrowUp') setActive(Math.max(at - 1, 0));
            else if (e.key === 'Enter') pick(results[at]);
            else return;
            e.preventDefault();
          }}
        />
        <p className="muted" role="status" aria-live="polite">
          {q.trim() ? `${results.length} result${results.length === 1 ? '' : 's'}` : 'Titles, contents, frames and work items.'}
        </p>
        <ul id={ids.list} role="listbox" aria-label="Results" className="plain search-results">
          {results.map((r, i) => (
            <li key={r.kind + r.id} id={optionId(i)} role="option" aria-selected={i === at} className={i === at ? 'active' : undefined} onClick={() => pick(r)} onPointerMove={() => i !== at && setActive(i)}>
              <span className="search-kind">{r.kind === 'note' ? 'Note' : r.kind === 'frame' ? 'Frame' : 'Work item'}</span> <strong>{r.label}</strong>
              {r.field !== 'title' && r.field !== 'key' && r.snippet !== r.label && <span className="search-snippet">{r.snippet}</span>}
            </li>
          ))}
        </ul>
      </div>
    </Dialog>
  );
}
