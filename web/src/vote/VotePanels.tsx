// The vote's owner popover and its results list (docs/web-client.md, "Dot
// voting"), loaded when first needed (Vote.tsx).
import { useId, useMemo, useState, type FormEvent } from 'react';
import type { Frame, Note, TrackerItem, Vote, VoteAction } from '../api/types';
import { Popover } from '../app/Popover';
import { useServices } from '../app/services';
import { TYPES } from '../canvas/notes';
import { randomId } from '../boards/ids';
import { nextKeys } from '../tracker/keys';
import type { UndoHistory } from '../canvas/undo';
import type { Voting } from './Vote';
import { DEFAULT_PER_NOTE, DEFAULT_PER_PERSON, itemsBySummary, MAX_PER_PERSON, parseStart, ranked, scopeLabel, topPicks, totalText, type StartForm } from './vote';
import { ResultTail } from './ResultTail';

/** VoteControls is the owner's popover: start a vote; close, reveal and clear the one there is. */
export function VoteControls({ voting, frames, timerOn, onClose }: { voting: Voting; frames: ReadonlyMap<string, Frame>; timerOn: boolean; onClose: () => void }) {
  const { api } = useServices();
  const v = voting.vote;
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  const [field, setField] = useState('');
  const [form, setForm] = useState<StartForm>({ perPerson: String(DEFAULT_PER_PERSON), perNote: String(DEFAULT_PER_NOTE), anonymous: true, scope: 'all', endsWithTimer: false });
  const uid = useId();

  const act = async (a: VoteAction, thenClose: boolean) => {
    setBusy(true);
    setError('');
    setField('');
    try {
      voting.onAnswer(await api.vote(voting.boardId, a));
      if (thenClose) onClose();
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
      setField((e as { field?: string }).field ?? '');
    } finally {
      setBusy(false);
    }
  };
  const start = (e: FormEvent) => {
    e.preventDefault();
    const r = parseStart(form);
    if ('error' in r) {
      setError(r.error);
      setField(r.field);
      return;
    }
    void act(r.action, true);
  };
  const liveFrames = [...frames.values()].filter((f) => !f.deletedAt).sort((a, b) => (a.title || '').localeCompare(b.title || ''));
  const set = (p: Partial<StartForm>) => setForm((f) => ({ ...f, ...p }));

  return (
    <Popover className="vote-pop" label="Vote controls" first="input, button" face=".vote-face" onClose={onClose}>
      {v && (
        <>
          <p className="vote-pop-head">
            {v.state === 'open' ? 'Voting' : v.state === 'closed' ? 'Voting closed' : 'Results shown'} on {scopeLabel(v.scope, frames)}: {totalText(v)}
          </p>
          <div className="vote-row">
            {v.state === 'open' && (
              <button type="button" disabled={busy} onClick={() => void act({ action: 'close' }, false)}>
                Close voting
              </button>
            )}
            {v.state !== 'revealed' && (
              <button type="button" className="primary" disabled={busy} onClick={() => void act({ action: 'reveal' }, true)}>
                Reveal results
              </button>
            )}
            {v.state !== 'open' && (
              <button type="button" disabled={busy} onClick={() => void act({ action: 'clear' }, false)}>
                Clear vote
              </button>
            )}
          </div>
        </>
      )}
      {(!v || v.state === 'revealed') && (
        <form className="vote-start" onSubmit={start} noValidate>
          <p className="vote-pop-head">{v ? 'Start a new vote (its results replace these)' : 'Start a dot vote for everyone'}</p>
          <label htmlFor={`${uid}-pp`}>Dots per person</label>
          <input id={`${uid}-pp`} type="number" min={1} max={MAX_PER_PERSON} inputMode="numeric" value={form.perPerson} aria-invalid={field === 'perPerson' || undefined} onChange={(e) => set({ perPerson: e.target.value })} />
          <label htmlFor={`${uid}-pn`}>At most per note</label>
          <input id={`${uid}-pn`} type="number" min={1} max={MAX_PER_PERSON} inputMode="numeric" value={form.perNote} aria-invalid={field === 'perNote' || undefined} onChange={(e) => set({ perNote: e.target.value })} />
          <label htmlFor={`${uid}-on`}>On</label>
          <select id={`${uid}-on`} value={form.scope} aria-invalid={field.startsWith('scope') || undefined} onChange={(e) => set({ scope: e.target.value })}>
            <option value="all">All notes</option>
            {liveFrames.length > 0 && (
              <optgroup label="The notes in a frame">
                {liveFrames.map((f) => (
                  <option key={f.id} value={`frame:${f.id}`}>
                    {f.title || 'Untitled frame'}
                  </option>
                ))}
              </optgroup>
            )}
            <optgroup label="The notes of a type">
              {TYPES.map((t) => (
                <option key={t} value={`type:${t}`}>
                  {t}
                </option>
              ))}
            </optgroup>
          </select>
          <label htmlFor={`${uid}-end`}>Ends</label>
          <select id={`${uid}-end`} value={form.endsWithTimer ? 'timer' : 'manual'} onChange={(e) => set({ endsWithTimer: e.target.value === 'timer' })}>
            <option value="manual">When I close it</option>
            <option value="timer" disabled={!timerOn}>
              When the timer ends{timerOn ? '' : ' (start a timer first)'}
            </option>
          </select>
          <label className="vote-check">
            <input type="checkbox" checked={form.anonymous} onChange={(e) => set({ anonymous: e.target.checked })} /> Anonymous (nobody sees who voted for what)
          </label>
          <button type="submit" className="primary" disabled={busy}>
            Start voting
          </button>
        </form>
      )}
      <p className="error" role="alert">
        {error}
      </p>
    </Popover>
  );
}

/** VoteResults is the ranked list of a revealed vote, whose top notes can be turned into work items. */
export function VoteResults({ vote, notes, items, canEdit, undo }: { vote: Vote; notes: ReadonlyMap<string, Note>; items: ReadonlyMap<string, TrackerItem>; canEdit: boolean; undo: UndoHistory }) {
  const rows = useMemo(() => ranked(vote, notes), [vote, notes]);
  // A note someone already turned into a work item (same title) is not offered again.
  const made = useMemo(() => itemsBySummary(items), [items]);
  const [picked, setPicked] = useState<Set<string> | null>(null);
  const picks = picked ?? topPicks(rows); // the top ones, made into items or not: those made are not counted below
  const [created, setCreated] = useState<string[]>([]);
  const count = rows.filter((r) => picks.has(r.noteId) && !r.deleted && !made.has(r.title)).length;
  const toggle = (id: string) => {
    const next = new Set(picks);
    if (next.has(id)) next.delete(id);
    else next.add(id);
    setPicked(next);
  };
  const create = () => {
    const chosen = rows.filter((r) => picks.has(r.noteId) && !r.deleted && !made.has(r.title));
    if (!chosen.length) return;
    const keys = nextKeys(items.values(), chosen.length);
    // A normal edit: pushed, seen live, logged, one undo step.
    undo.transact(`work items from the vote`, (r) => {
      chosen.forEach((row, i) => {
        r.upsertItem({ id: randomId(), key: keys[i], type: 'task', summary: row.title, description: `${row.count} dot${row.count === 1 ? '' : 's'} in the vote`, status: 'todo', updatedAt: '' });
      });
    });
    setCreated(keys);
    setPicked(new Set());
  };
  return (
    <section className="vote-results" aria-labelledby="vote-results-title">
      <h2 id="vote-results-title">Results</h2>
      {rows.length === 0 ? (
        <p className="muted">Nobody voted.</p>
      ) : (
        <ol className="plain">
          {rows.map((r) => (
            <li key={r.noteId} className={r.deleted ? 'is-deleted' : undefined} data-note-id={r.noteId} data-count={r.count}>
              <span className="vote-rank" aria-hidden="true">
                {r.rank}
              </span>
              {canEdit && !r.deleted && !made.has(r.title) ? (
                <label className="vote-result-title">
                  <input type="checkbox" checked={picks.has(r.noteId)} onChange={() => toggle(r.noteId)} /> {r.title}
                </label>
              ) : (
                <span className="vote-result-title">
                  {r.title}
                  {r.deleted && <span className="muted"> (deleted)</span>}
                  {made.has(r.title) && <span className="vote-result-item"> · work item {made.get(r.title)}</span>}
                </span>
              )}
              <ResultTail count={r.count} voters={r.voters} />
            </li>
          ))}
        </ol>
      )}
      {canEdit && rows.length > 0 && (
        <div className="vote-row">
          <button type="button" className="primary" disabled={count === 0} onClick={create}>
            Create work items{count ? ` (${count})` : ''}
          </button>
          <span className="muted" role="status">
            {created.length ? `Created ${created.join(', ')}.` : ''}
          </span>
        </div>
      )}
    </section>
  );
}
