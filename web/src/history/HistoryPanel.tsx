// The history of one note, or the board's deleted notes and votes, from the
// changelog (docs/changelog.md). Loaded lazily (it brings in `diff`). A
// restore asks the server for the logged note (POST /log/restore reads only)
// and hands it to onRestore, which pushes it as a normal edit. A vote's
// entries (start_vote, reveal_vote) are read as vote records (voteRecord.ts)
// and shown in words; they have no Restore (the server refuses one, 400).
import { useCallback, useEffect, useId, useRef, useState } from 'react';
import { diffLines } from 'diff';
import { useServices } from '../app/services';
import { DockPanel } from '../layout/Dock';
import type { Frame, LogInfo, Note, VoteLogAction } from '../api/types';
import { renderMarkdown } from '../canvas/notes';
import { actionLabel, isVoteAction, parseVoteRecord, voteSummary, type VoteRecord } from './voteRecord';
import { ResultTail } from '../vote/ResultTail';

/** PAGE is how many entries one page lists. */
export const PAGE = 20;

/** Filter is what the list shows: one action, or all of a note's ('' ). */
type Filter = LogInfo['action'] | '';

/** A note's history: all its changes, or one kind. */
const ACTIONS: { value: Filter; label: string }[] = [
  { value: '', label: 'All changes' },
  { value: 'create_note', label: 'Created' },
  { value: 'update_note', label: 'Edited' },
  { value: 'delete_note', label: 'Deleted' },
];

/** The board's own entries (no note): its deleted notes, or its votes. */
const BOARD_ACTIONS: { value: Filter; label: string }[] = [
  { value: 'delete_note', label: 'Deleted notes' },
  { value: 'reveal_vote', label: 'Vote results' },
  { value: 'start_vote', label: 'Votes started' },
];

/** Opened is the entry shown below the list: a note's version, or a vote record. */
type Opened = { key: string; note: Note; source?: boolean; vote?: undefined } | { key: string; vote: VoteRecord; action: VoteLogAction; timestamp: string; md: string; note?: undefined };

/** VoteRead is a vote entry's record as read, or why it could not be. */
type VoteRead = { md: string; vote: VoteRecord } | { error: string };

interface Props {
  boardId: string;
  /** noteId: one note's history; without it, the board's deleted notes (or votes: action). */
  noteId?: string;
  /** action: the filter the board's history opens with (delete_note unless a vote's). */
  action?: 'delete_note' | VoteLogAction;
  /** openKey: an entry to open at once, its Markdown shown (a note's mark: the text a merge overwrote, or the note as deleted). */
  openKey?: string;
  notes: ReadonlyMap<string, Note>;
  /** frames name a vote's frame ("the notes in “Ideas”"). */
  frames?: ReadonlyMap<string, Frame>;
  canEdit: boolean;
  onRestore: (n: Note) => void;
  onClose: () => void;
}

const NO_FRAMES: ReadonlyMap<string, Frame> = new Map();

export default function HistoryPanel({ boardId, noteId, openKey, action: initial, notes, frames = NO_FRAMES, canEdit, onRestore, onClose }: Props) {
  const { api } = useServices();
  const [action, setAction] = useState<Filter>(noteId ? '' : (initial ?? 'delete_note'));
  const [entries, setEntries] = useState<LogInfo[]>([]);
  const [more, setMore] = useState(false);
  const [error, setError] = useState('');
  const [loading, setLoading] = useState(true);
  const [open, setOpen] = useState<Opened | null>(null);
  const [status, setStatus] = useState('');
  // The deleted notes' titles, by log key: a list entry carries only the
  // note's id, and its snapshot (which has the title) is fetched per entry.
  const [titles, setTitles] = useState<ReadonlyMap<string, string>>(new Map());
  // The vote entries' records, by log key: read per entry like the titles.
  const [records, setRecords] = useState<ReadonlyMap<string, VoteRead>>(new Map());
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
        if (!noteId) void loadTitles(r.entries.filter((e) => !isVoteAction(e.action)));
        void loadRecords(r.entries.filter((e) => isVoteAction(e.action)));
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

  // loadRecords reads the vote records of one page (in parallel, as
  // loadTitles): the list shows each vote's summary without a click.
  async function loadRecords(page: LogInfo[]) {
    if (page.length === 0) return;
    const got = await Promise.all(
      page.map(async (e): Promise<[string, VoteRead]> => {
        try {
          const md = await api.logEntry(boardId, e.key);
          return [e.key, { md, vote: parseVoteRecord(md) }];
        } catch (err) {
          return [e.key, { error: (err as Error).message }];
        }
      }),
    );
    setRecords((old) => new Map([...old, ...got]));
  }

  function showVote(e: LogInfo & { action: VoteLogAction }) {
    const r = records.get(e.key);
    if (r && 'vote' in r) setOpen({ key: e.key, vote: r.vote, md: r.md, action: e.action, timestamp: e.timestamp });
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
      const n = (open?.key === key ? open.note : undefined) ?? (await api.restoreNote(boardId, key));
      onRestore(n);
      setStatus(`Restored "${n.title || n.id}".`);
    } catch (e) {
      setError((e as Error).message);
    }
  }

  const title = noteId ? `History of "${current?.title || noteId}"` : action === 'delete_note' ? 'Deleted notes' : 'Vote history';
  const choices = noteId ? ACTIONS : BOARD_ACTIONS;
  const empty = noteId ? 'No changes logged yet.' : action === 'delete_note' ? 'No deleted notes.' : action === 'reveal_vote' ? 'No vote results yet.' : 'No votes started yet.';
  return (
    <DockPanel title={title} onClose={onClose} wide>
      <div className="history">
        <div className="row">
          <label htmlFor={filterId}>Show</label>
            <select id={filterId} value={action} onChange={(e) => setAction(e.target.value as Filter)}>
              {choices.map((a) => (
                <option key={a.value} value={a.value}>
                  {a.label}
                </option>
              ))}
            </select>
        </div>
        {error && (
          <p className="error" role="alert">
            {error}
          </p>
        )}
        <p className="sr-only" role="status" aria-live="polite">
          {status}
        </p>
        {!loading && entries.length === 0 && !error && <p className="muted">{empty}</p>}
        <ol className="plain history-list" aria-label="Changes, newest first">
          {entries.map((e) => {
            if (isVoteAction(e.action)) {
              const r = records.get(e.key);
              const when = new Date(e.timestamp).toLocaleString();
              const ve = { ...e, action: e.action };
              return (
                <li key={e.key} className={`history-vote${open?.key === e.key ? ' open' : ''}`} data-action={e.action}>
                  <span className="history-entry">
                    <span>
                      {actionLabel(e.action)} <time dateTime={e.timestamp}>{when}</time>
                    </span>
                    {r && <span className={'vote' in r ? 'history-summary' : 'history-summary error'}>{'vote' in r ? voteSummary(e.action, r.vote, frames) : r.error}</span>}
                  </span>{' '}
                  <button type="button" disabled={!r || !('vote' in r)} onClick={() => showVote(ve)} aria-label={`View the ${e.action === 'reveal_vote' ? 'results' : 'vote'} of ${when}`}>
                    View
                  </button>
                </li>
              );
            }
            const live = notes.has(e.noteId);
            return (
              <li key={e.key} className={open?.key === e.key ? 'open' : undefined}>
                <span>
                  {actionLabel(e.action)} {noteId ? '' : `"${titles.get(e.key) ?? e.noteId}" `}
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
        {open?.vote && <VoteVersion key={open.key} vote={open.vote} action={open.action} timestamp={open.timestamp} md={open.md} frames={frames} />}
        {open?.note && (
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

/** VoteVersion shows one vote entry: how the vote was set up and, for the results, its ranked notes as they were at the reveal. */
function VoteVersion({ vote, action, timestamp, md, frames }: { vote: VoteRecord; action: VoteLogAction; timestamp: string; md: string; frames: ReadonlyMap<string, Frame> }) {
  const here = useRef<HTMLElement>(null);
  useEffect(() => {
    void here.current?.scrollIntoView?.({ block: 'nearest' });
  }, []);
  const when = new Date(timestamp).toLocaleString();
  const started = vote.startedAt ? new Date(vote.startedAt) : null;
  return (
    <section className="history-version history-vote-record" aria-label={`${actionLabel(action)} of ${when}`} ref={here}>
      <h3>{actionLabel(action)}</h3>
      <p className="muted">
        Started by {vote.startedBy || 'the owner'}
        {started && !Number.isNaN(started.getTime()) && (
          <>
            {' '}
            at <time dateTime={vote.startedAt}>{started.toLocaleString()}</time>
          </>
        )}
        .
      </p>
      <p className="muted">{voteSummary('start_vote', vote, frames).replace(/^on /, 'On ')}</p>
      {action === 'reveal_vote' &&
        (vote.results.length === 0 ? (
          <p className="muted">Nobody voted.</p>
        ) : (
          <ol className="plain history-vote-results" aria-label="Results, most dots first">
            {vote.results.map((r, i) => (
              <li key={`${r.noteId} ${i}`} data-note-id={r.noteId} data-count={r.count} className={r.deleted ? 'is-deleted' : undefined}>
                <span className="vote-rank">
                  <span className="sr-only">Rank </span>
                  {r.rank}
                </span>
                <span className="vote-result-title">{r.title}</span>
                <ResultTail count={r.count} voters={r.voters} />
              </li>
            ))}
          </ol>
        ))}
      {action === 'reveal_vote' && vote.results.length > 0 && <p className="muted">{`${vote.dots} dot${vote.dots === 1 ? '' : 's'} from ${vote.voters} ${vote.voters === 1 ? 'person' : 'people'}${vote.anonymous ? ', anonymous' : ''}.`}</p>}
      <details>
        <summary>Markdown</summary>
        <pre className="source">{md}</pre>
      </details>
    </section>
  );
}
