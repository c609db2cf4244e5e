// The history of one note, or the board's deleted notes, from the changelog
// (docs/changelog.md). Loaded lazily (it brings in `diff`). A restore asks
// the server for the logged note (POST /log/restore reads only) and hands it
// to onRestore, which pushes it as a normal edit.
import { useCallback, useEffect, useId, useRef, useState } from 'react';
import { diffLines } from 'diff';
import { useServices } from '../app/services';
import { DockPanel } from '../layout/Dock';
import type { LogAction, LogInfo, Note } from '../api/types';
import { renderMarkdown } from '../canvas/notes';

/** PAGE is how many entries one page lists. */
export const PAGE = 20;

const ACTIONS: { value: LogAction | ''; label: string }[] = [
  { value: '', label: 'All changes' },
  { value: 'create_note', label: 'Created' },
  { value: 'update_note', label: 'Edited' },
  { value: 'delete_note', label: 'Deleted' },
];

const actionText: Record<LogAction, string> = {
  create_note: 'Created',
  update_note: 'Edited',
  delete_note: 'Deleted',
  rename_board: 'Renamed',
};

interface Props {
  boardId: string;
  /** noteId: one note's history; without it, the board's deleted notes. */
  noteId?: string;
  /** openKey: an entry to open at once, its Markdown shown (a note's mark: the text a merge overwrote, or the note as deleted). */
  openKey?: string;
  notes: ReadonlyMap<string, Note>;
  canEdit: boolean;
  onRestore: (n: Note) => void;
  onClose: () => void;
}

export default function HistoryPanel({ boardId, noteId, openKey, notes, canEdit, onRestore, onClose }: Props) {
  const { api } = useServices();
  const [action, setAction] = useState<LogAction | ''>(noteId ? '' : 'delete_note');
  const [entries, setEntries] = useState<LogInfo[]>([]);
  const [more, setMore] = useState(false);
  const [error, setError] = useState('');
  const [loading, setLoading] = useState(true);
  const [open, setOpen] = useState<{ key: string; note: Note; source?: boolean } | null>(null);
  const [status, setStatus] = useState('');
  // The deleted notes' titles, by log key: a list entry carries only the
  // note's id, and its snapshot (which has the title) is fetched per entry.
  const [titles, setTitles] = useState<ReadonlyMap<string, string>>(new Map());
  const filterId = useId();
  const current = noteId ? notes.get(noteId) : undefined;

  const load = useCallback(
    async (before?: string) => {
      setLoading(true);
      setError('');
      try {
        const r = await api.listLog(boardId, { noteId, action: action || undefined, before, limit: PAGE });
        setEntries((old) => (before ? [...old, ...r.entries] : r.entries));
        setMore(r.entries.length === PAGE);
        if (!noteId) void loadTitles(r.entries);
      } catch (e) {
        setError((e as Error).message);
      } finally {
        setLoading(false);
      }
    },
    [api, boardId, noteId, action],
  );
  useEffect(() => {
    setOpen(null);
    void load();
  }, [load]);

  // Opened from a mark: show that entry's Markdown at once (it may be older than the first page).
  useEffect(() => {
    if (!openKey) return;
    let live = true;
    api.restoreNote(boardId, openKey).then(
      (note) => live && setOpen({ key: openKey, note, source: true }),
      (e: Error) => live && setError(e.message),
    );
    return () => {
      live = false;
    };
  }, [api, boardId, openKey]);

  // loadTitles reads the snapshots of one page of deleted notes (at most
  // PAGE requests, in parallel) so the list names them; an entry whose read
  // fails keeps showing its id.
  async function loadTitles(page: LogInfo[]) {
    const got = await Promise.all(
      page.map(async (e) => {
        try {
          const n = await api.restoreNote(boardId, e.key);
          return [e.key, n.title || 'Untitled'] as const;
        } catch {
          return null;
        }
      }),
    );
    setTitles((old) => {
      const m = new Map(old);
      for (const g of got) if (g) m.set(g[0], g[1]);
      return m;
    });
  }

  async function show(key: string) {
    try {
      setOpen({ key, note: await api.restoreNote(boardId, key) });
    } catch (e) {
      setError((e as Error).message);
    }
  }

  async function restore(key: string) {
    try {
      const n = open?.key === key ? open.note : await api.restoreNote(boardId, key);
      onRestore(n);
      setStatus(`Restored "${n.title || n.id}".`);
    } catch (e) {
      setError((e as Error).message);
    }
  }

  const title = noteId ? `History of "${current?.title || noteId}"` : 'Deleted notes';
  return (
    <DockPanel title={title} onClose={onClose} wide>
      <div className="history">
        {noteId && (
          <div className="row">
            <label htmlFor={filterId}>Show</label>
            <select id={filterId} value={action} onChange={(e) => setAction(e.target.value as LogAction | '')}>
              {ACTIONS.map((a) => (
                <option key={a.value} value={a.value}>
                  {a.label}
                </option>
              ))}
            </select>
          </div>
        )}
        {error && (
          <p className="error" role="alert">
            {error}
          </p>
        )}
        <p className="sr-only" role="status" aria-live="polite">
          {status}
        </p>
        {!loading && entries.length === 0 && !error && <p className="muted">{noteId ? 'No changes logged yet.' : 'No deleted notes.'}</p>}
        <ol className="plain history-list" aria-label="Changes, newest first">
          {entries.map((e) => {
            const live = notes.has(e.noteId);
            return (
              <li key={e.key} className={open?.key === e.key ? 'open' : undefined}>
                <span>
                  {actionText[e.action]} {noteId ? '' : `"${titles.get(e.key) ?? e.noteId}" `}
                  <time dateTime={e.timestamp}>{new Date(e.timestamp).toLocaleString()}</time>
                </span>{' '}
                <button type="button" onClick={() => void show(e.key)} aria-label={`View the version of ${new Date(e.timestamp).toLocaleString()}`}>
                  View
                </button>{' '}
                {canEdit && (noteId || !live) && (
                  <button type="button" onClick={() => void restore(e.key)} aria-label={`Restore the version of ${new Date(e.timestamp).toLocaleString()}`}>
                    Restore
                  </button>
                )}
              </li>
            );
          })}
        </ol>
        {more && (
          <button type="button" disabled={loading} onClick={() => void load(entries[entries.length - 1]?.timestamp)}>
            Older changes
          </button>
        )}
        {open && (
          <Version
            key={open.key}
            note={open.note}
            current={notes.get(open.note.id)}
            source={open.source}
            onRestore={canEdit && (noteId || !notes.has(open.note.id)) ? () => void restore(open.key) : undefined}
          />
        )}
      </div>
    </DockPanel>
  );
}

/** Version shows one logged version: rendered, as source (first when source), and as a diff against the note now. */
function Version({ note, current, source, onRestore }: { note: Note; current?: Note; source?: boolean; onRestore?: () => void }) {
  const [view, setView] = useState<'rendered' | 'source' | 'diff'>(source ? 'source' : 'rendered');
  const name = useId();
  const here = useRef<HTMLElement>(null);
  // Below the list: bring it into view when it opens.
  // (In braces: newer browsers' scrollIntoView returns a promise, which React would take for a clean-up.)
  useEffect(() => {
    void here.current?.scrollIntoView?.({ block: 'nearest' });
  }, []);
  return (
    <section className="history-version" aria-label={`Version: ${note.title || note.id}`} ref={here}>
      <div className="row">
        <h3>{note.title || 'Untitled'}</h3>
        {onRestore && (
          <button type="button" onClick={onRestore}>
            Restore this version
          </button>
        )}
      </div>
      <fieldset className="row">
        <legend className="sr-only">Show the version</legend>
        {(['rendered', 'source', 'diff'] as const).map((v) => (
          <label key={v}>
            <input type="radio" name={name} checked={view === v} onChange={() => setView(v)} /> {v === 'rendered' ? 'Rendered' : v === 'source' ? 'Markdown' : 'Changes since'}
          </label>
        ))}
      </fieldset>
      {view === 'rendered' && <div className="md" dangerouslySetInnerHTML={{ __html: renderMarkdown(note.content) }} />}
      {view === 'source' && <pre className="source">{note.content}</pre>}
      {view === 'diff' &&
        (current ? (
          <pre className="diff" aria-label="Lines removed since this version are marked −, lines added +">
            {diffLines(note.content, current.content).map((p, i) => (
              <span key={i} className={p.added ? 'added' : p.removed ? 'removed' : undefined}>
                {p.value
                  .replace(/\n$/, '')
                  .split('\n')
                  .map((l) => (p.added ? '+ ' : p.removed ? '− ' : '  ') + l)
                  .join('\n') + '\n'}
              </span>
            ))}
          </pre>
        ) : (
          <p className="muted">The note is not on the board now.</p>
        ))}
    </section>
  );
}
