import { lazy, Suspense, useCallback, useEffect, useMemo, useState, useSyncExternalStore } from 'react';
import type { Frame, Note, Timer, TrackerItem, Vote } from '../api/types';
import { ServerClock } from '../session/clock';
import { useServices } from '../app/services';
import type { Connection } from '../sync/client';
import type { UndoHistory } from '../canvas/undo';
import { MyDots } from './dots';
import { chipText, endedByTimer, shownVote, totalText } from './vote';
import './vote.css';

// The owner's popover and the results are needed only when a vote is
// started or revealed: loaded then, not with the board.
const VoteControls = lazy(() => import('./VotePanels').then((m) => ({ default: m.VoteControls })));
const VoteResults = lazy(() => import('./VotePanels').then((m) => ({ default: m.VoteResults })));

/** Voting is the board's vote as the screen shows it, shared by the top bar, the chip, the results and the dots on the notes. */
export interface Voting {
  boardId: string;
  /**
   * vote is the board header's (or the owner's own answer, until the
   * header catches up); null: none. A vote the timer ended reads as
   * closed (shownVote).
   */
  vote: Vote | null;
  /** endedByTimer: the vote is open on the server but the timer it was tied to has run out. */
  endedByTimer: boolean;
  dots: MyDots;
  /** onAnswer shows the owner's action's answer (the vote after it, null: none) until the board header next changes. */
  onAnswer: (v: Vote | null) => void;
}

/**
 * useVoting follows the board's vote: my dots are fetched when a vote
 * appears and again when the live channel comes back.
 */
export function useVoting(boardId: string, fromBoard: Vote | null, timer: Timer | null, connection: Connection): Voting {
  const { api } = useServices();
  const dots = useMemo(() => new MyDots(api, boardId), [api, boardId]);
  // The owner's own action shows at once, from its answer, until the board
  // header changes (its live change, or a later one). The answer carries
  // no version, so the header it was given over is kept to tell.
  const [answered, setAnswered] = useState<{ vote: Vote | null; over: Vote | null } | null>(null);
  const raw = answered && answered.over === fromBoard ? answered.vote : fromBoard;
  // A vote tied to the timer ends when the timer does, in the server's
  // time (the server sends nothing then): a clock of its own, sampled
  // only while such a vote is open, and one render at the end.
  const tied = !!raw?.endsWithTimer && raw.state === 'open';
  const clock = useMemo(() => (tied ? new ServerClock({ fetchTime: async () => (await api.serverTime()).serverTime }) : null), [tied, api]);
  useSyncExternalStore(clock?.onChange ?? noSubscribe, clock?.getEstimate ?? noEstimate);
  useEffect(() => {
    if (clock && connection === 'online') void clock.sync();
  }, [clock, connection]);
  const [, rerender] = useState(0);
  const serverNow = clock?.now() ?? null;
  const endsAt = tied && timer?.state === 'running' ? (timer.endsAt ?? null) : null;
  useEffect(() => {
    if (endsAt === null || serverNow === null || endsAt <= serverNow) return;
    const h = setTimeout(() => rerender((n) => n + 1), endsAt - serverNow + 50);
    return () => clearTimeout(h);
  }, [endsAt, serverNow]);
  const ended = !!raw && endedByTimer(raw, timer, serverNow);
  const vote = useMemo(() => (ended ? shownVote(raw, null, null) : raw), [raw, ended]);
  const onAnswer = useCallback((v: Vote | null) => setAnswered({ vote: v, over: fromBoard }), [fromBoard]);
  useEffect(() => dots.follow(vote), [dots, vote]);
  useEffect(() => {
    if (connection === 'online') void dots.refresh();
  }, [dots, connection]);
  return useMemo(() => ({ boardId, vote, endedByTimer: ended, dots, onAnswer }), [boardId, vote, ended, dots, onAnswer]);
}

const noSubscribe = () => () => {};
const noEstimate = () => null;

/** BallotIcon is three dots (drawn: emoji fonts are not everywhere). */
function BallotIcon() {
  return (
    <svg className="vote-icon" viewBox="0 0 16 16" width="16" height="16" aria-hidden="true" focusable="false">
      <circle cx="4.5" cy="5" r="2.6" fill="currentColor" />
      <circle cx="11.5" cy="5" r="2.6" fill="currentColor" />
      <circle cx="8" cy="11.2" r="2.6" fill="currentColor" />
    </svg>
  );
}

/**
 * VoteButton is the owner's "Vote" in the top bar: a popover to start a
 * vote, and while there is one to close it, reveal it and clear it.
 */
export function VoteButton({ voting, frames, timerOn }: { voting: Voting; frames: ReadonlyMap<string, Frame>; timerOn: boolean }) {
  const [open, setOpen] = useState(false);
  const close = useCallback(() => setOpen(false), []);
  const v = voting.vote;
  return (
    <div className={`vote-owner${v ? ` is-${v.state}` : ''}`} data-state={v?.state ?? 'none'}>
      <button type="button" className="vote-face" aria-haspopup="dialog" aria-expanded={open} aria-label={v ? `Vote (${v.state}): vote controls` : 'Vote'} title={v ? 'Vote controls' : 'Start a dot vote'} onClick={() => setOpen(!open)}>
        <BallotIcon />
        <span className="vote-word">Vote</span>
      </button>
      {open && (
        <Suspense fallback={null}>
          <VoteControls voting={voting} frames={frames} timerOn={timerOn} onClose={close} />
        </Suspense>
      )}
    </div>
  );
}

/**
 * VoteBar is what everyone sees of the vote above the board: the chip
 * (my dots left, and everyone's totals, never whose), a refused dot's
 * reason, and once revealed the ranked results.
 */
export function VoteBar({ voting, notes, items, canEdit, undo }: { voting: Voting; notes: ReadonlyMap<string, Note>; items: ReadonlyMap<string, TrackerItem>; canEdit: boolean; undo: UndoHistory }) {
  const v = voting.vote;
  const d = useSyncExternalStore(voting.dots.onChange, voting.dots.getSnapshot);
  const [shown, setShown] = useState(true);
  useEffect(() => setShown(true), [v?.id, v?.state]);
  if (!v) return null;
  return (
    <>
      <div className={`vote-chip is-${v.state}`} data-state={v.state} data-left={d.mine ? d.mine.left : undefined}>
        <BallotIcon />
        <span className="vote-chip-main" role="status">
          {voting.endedByTimer ? 'Voting ended with the timer' : chipText(v, d.mine)}
        </span>
        <span className="vote-chip-total" role="status" title="Everyone's dots so far; who voted for what is shown only once the results are revealed">
          {totalText(v)}
        </span>
        {v.state === 'revealed' && (
          <button type="button" className="vote-chip-toggle" aria-expanded={shown} onClick={() => setShown(!shown)}>
            {shown ? 'Hide' : 'Show'}
          </button>
        )}
      </div>
      {d.error && (
        <p className="vote-error" role="alert">
          {d.error}{' '}
          <button type="button" onClick={() => voting.dots.dismiss()} aria-label="Dismiss">
            ✕
          </button>
        </p>
      )}
      {v.state === 'revealed' && shown && (
        <Suspense fallback={<p role="status">Loading the results…</p>}>
          <VoteResults vote={v} notes={notes} items={items} canEdit={canEdit} undo={undo} />
        </Suspense>
      )}
    </>
  );
}
