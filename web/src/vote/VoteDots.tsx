import { memo, useEffect, useMemo, useRef, useSyncExternalStore } from 'react';
import { ViewportPortal, useStoreApi } from '@xyflow/react';
import type { Frame, MyVotes, Note, Vote } from '../api/types';
import { sizeOf } from '../editor/geometry';
import { addBlocked, counts, myCount, scopeIds } from './vote';
import type { MyDots } from './dots';

/** The controls keep a readable size when zoomed out: at most this many times their size at 100%. */
const MAX_GROW = 2.5;

/**
 * VoteDots draws the vote on the notes, in board space (xyflow's
 * ViewportPortal): on each note in the vote, my dots (a button that takes
 * one back) and a button that adds one; once revealed, each note's count.
 * It sits over the notes whether they are DOM or drawn by the canvas layer.
 * The notes themselves are not touched, so a vote never edits a note.
 */
export function VoteDots({ vote, dots, notes, frames }: { vote: Vote | null; dots: MyDots; notes: ReadonlyMap<string, Note>; frames: ReadonlyMap<string, Frame> }) {
  const d = useSyncExternalStore(dots.onChange, dots.getSnapshot);
  const scope = vote?.scope;
  const ids = useMemo(() => (scope ? scopeIds(scope, notes.values(), frames) : new Set<string>()), [scope, notes, frames]);
  const revealed = useMemo(() => (vote ? counts(vote) : new Map<string, number>()), [vote]);

  // The controls grow as the view zooms out (up to MAX_GROW), so they can
  // still be hit; the scale is a CSS variable set outside React, so a pan
  // or zoom does not render the controls again.
  const layer = useRef<HTMLDivElement>(null);
  const store = useStoreApi();
  useEffect(() => {
    const apply = (zoom: number) => layer.current?.style.setProperty('--vote-k', String(Math.min(MAX_GROW, Math.max(1, 1 / zoom))));
    let last = store.getState().transform[2];
    apply(last);
    return store.subscribe((s) => {
      if (s.transform[2] === last) return;
      last = s.transform[2];
      apply(last);
    });
  }, [store]);

  if (!vote) return null;
  const list: Note[] = [];
  for (const id of ids) {
    const n = notes.get(id);
    if (n) list.push(n);
  }
  return (
    <ViewportPortal>
      <div ref={layer} className="vote-layer">
        {vote.state !== 'revealed' && list.map((n) => <NoteDots key={n.id} note={n} vote={vote} mine={d.mine} dots={dots} />)}
        {vote.state === 'revealed' &&
          [...revealed].map(([id, count]) => {
            const n = notes.get(id);
            return n && !n.deletedAt ? <CountBadge key={id} note={n} count={count} /> : null;
          })}
      </div>
    </ViewportPortal>
  );
}

/** NoteDots is one note's controls, at its bottom-left edge. */
const NoteDots = memo(function NoteDots({ note, vote, mine, dots }: { note: Note; vote: Vote; mine: MyVotes | null; dots: MyDots }) {
  const s = sizeOf(note);
  const title = note.title.trim() || 'untitled note';
  const n = myCount(vote, mine, note.id);
  const blocked = mine ? addBlocked(vote, mine, note.id, true) : 'Loading your dots…';
  const open = vote.state === 'open';
  const stop = (e: { stopPropagation: () => void }) => e.stopPropagation();
  return (
    <div
      className="vote-dots nodrag nopan nowheel"
      data-note-id={note.id}
      data-mine={n}
      style={{ transform: `translate(${note.x + 10}px, ${note.y + s.h}px) scale(var(--vote-k, 1)) translateY(-50%)` }}
      onPointerDown={stop}
      onDoubleClick={stop}
      // Enter and Space press the focused button; the canvas's shortcuts (Enter edits the selected note) listen on the document.
      onKeyDown={(e) => (e.key === 'Enter' || e.key === ' ') && e.stopPropagation()}
    >
      {n > 0 &&
        (open ? (
          <button type="button" className="vote-mine" aria-label={`Take back a vote from ${title}`} title="Take back a dot" onClick={() => dots.cast(note.id, -1)}>
            {Array.from({ length: n }, (_, i) => (
              <span key={i} className="vote-dot" aria-hidden="true" />
            ))}
          </button>
        ) : (
          <span className="vote-mine" role="img" aria-label={`${n} of your dots on ${title}`}>
            {Array.from({ length: n }, (_, i) => (
              <span key={i} className="vote-dot" aria-hidden="true" />
            ))}
          </span>
        ))}
      {open && (
        <button type="button" className="vote-add" aria-label={`Vote for ${title}`} title={blocked || 'Put a dot on this note'} aria-disabled={blocked ? true : undefined} onClick={() => !blocked && dots.cast(note.id, 1)}>
          +
        </button>
      )}
    </div>
  );
});

/** CountBadge is a note's count once revealed, at its top-right corner. */
function CountBadge({ note, count }: { note: Note; count: number }) {
  const s = sizeOf(note);
  return (
    <div className="vote-count" data-note-id={note.id} data-count={count} style={{ transform: `translate(${note.x + s.w}px, ${note.y}px) scale(var(--vote-k, 1)) translate(-70%, -30%)` }} role="img" aria-label={`${count} dot${count === 1 ? '' : 's'} on ${note.title.trim() || 'untitled note'}`}>
      {count}
    </div>
  );
}
