import { useCallback, useEffect, useMemo, useReducer, useRef, useState, useSyncExternalStore, type FormEvent } from 'react';
import { createPortal } from 'react-dom';
import type { Timer, TimerAction, TimerAnswer } from '../api/types';
import { Popover } from '../app/Popover';
import { useServices } from '../app/services';
import type { Connection } from '../sync/client';
import { Chime } from './chime';
import { ServerClock } from './clock';
import { EndWatch, formatRemaining, parseMinutes, PRESET_MINUTES, remainingMs, spokenRemaining } from './timer';
import './session.css';

interface Props {
  boardId: string;
  /** timer is the board header's (null: none), at board version `version`. */
  timer: Timer | null;
  version: number;
  /** isOwner: the owner (the facilitator) runs the timer; everyone else sees it. */
  isOwner: boolean;
  /** connection: the clock is sampled again each time the live channel comes back. */
  connection: Connection;
  /** phase is the board's current phase, which a start may be tied to. */
  phase: { id: string; name: string } | null;
}

/** How long "Time's up" stays on screen. */
const TOAST_MS = 8000;

/**
 * SessionTimer is the board's countdown in the top bar (docs/web-client.md,
 * "The timer"): the time left, counted in the server's time, for everyone;
 * for the owner, a popover to start, pause, resume, add a minute and stop.
 * At zero it chimes (once a gesture allowed sound), pulses and says "Time's
 * up".
 */
export function SessionTimer({ boardId, timer: fromBoard, version, isOwner, connection, phase }: Props) {
  const { api } = useServices();
  const clock = useMemo(() => new ServerClock({ fetchTime: async () => (await api.serverTime()).serverTime }), [api]);
  const est = useSyncExternalStore(clock.onChange, clock.getEstimate);
  useEffect(() => {
    if (connection === 'online') void clock.sync();
  }, [clock, connection]);

  // The owner's own action shows at once, from its answer, until the board
  // (its live change) catches up with it.
  const [answered, setAnswered] = useState<TimerAnswer | null>(null);
  const timer = answered && answered.serverVersion > version ? answered.timer : fromBoard;

  // A running timer redraws a few times a second; a paused one never.
  const [, tick] = useReducer((n: number) => n + 1, 0);
  const running = timer?.state === 'running';
  useEffect(() => {
    if (!running) return;
    const h = setInterval(tick, 250);
    return () => clearInterval(h);
  }, [running]);
  const serverNow = clock.now();
  const left = !timer ? null : timer.state === 'paused' ? remainingMs(timer, 0) : serverNow === null ? null : remainingMs(timer, serverNow);
  const ended = running && left === 0;

  const chime = useRef<Chime | null>(null);
  useEffect(() => {
    const c = new Chime();
    chime.current = c;
    return () => c.close();
  }, []);
  const watch = useRef(new EndWatch());
  const [toast, setToast] = useState(false);
  useEffect(() => {
    if (!watch.current.seen(timer, left)) return;
    chime.current?.play();
    setToast(true);
    const h = setTimeout(() => setToast(false), TOAST_MS);
    return () => clearTimeout(h);
  }, [timer, left]);
  useEffect(() => {
    if (!timer) setToast(false);
  }, [timer]);

  const [open, setOpen] = useState(false);
  const close = useCallback(() => setOpen(false), []);
  if (!timer && !isOwner) return <TimeUp show={toast} />;

  const text = left === null ? '--:--' : formatRemaining(left);
  const spoken = left === null ? 'timer starting' : timer?.state === 'paused' ? `paused, ${spokenRemaining(left)}` : spokenRemaining(left);
  const attrs = {
    'data-state': timer?.state ?? 'none',
    'data-ends-at': timer?.state === 'running' ? timer.endsAt : undefined,
    'data-remaining-ms': left ?? undefined,
    'data-offset': est?.offset,
    'data-round-trip': est?.roundTrip,
  };
  const face = (
    <>
      <TimerIcon paused={timer?.state === 'paused'} />
      {timer ? <span className="timer-time">{text}</span> : <span className="timer-word">Timer</span>}
    </>
  );
  const cls = `session-timer${timer ? ` is-${timer.state}` : ''}${ended ? ' is-ended' : ''}`;

  return (
    <div className={cls} {...attrs}>
      {isOwner ? (
        <button type="button" className="timer-face" aria-haspopup="dialog" aria-expanded={open} aria-label={timer ? `Timer: ${spoken}. Timer controls` : 'Timer'} title={timer ? 'Timer controls' : 'Start a timer'} onClick={() => setOpen(!open)}>
          {face}
        </button>
      ) : (
        <span className="timer-face" role="timer" aria-label={`Timer: ${spoken}`} title={timer?.startedBy ? `Timer started by ${timer.startedBy}` : undefined}>
          {face}
        </span>
      )}
      {open && isOwner && <TimerControls boardId={boardId} timer={timer} phase={phase} onAnswer={setAnswered} onClose={close} />}
      <TimeUp show={toast} />
    </div>
  );
}

/** TimerIcon is a stopwatch, or a pause sign for a paused timer (drawn: emoji fonts are not everywhere). */
function TimerIcon({ paused }: { paused: boolean }) {
  return (
    <svg className="timer-icon" viewBox="0 0 16 16" width="16" height="16" aria-hidden="true" focusable="false">
      {paused ? (
        <path d="M5 3h2v10H5zM9 3h2v10H9z" fill="currentColor" />
      ) : (
        <g fill="none" stroke="currentColor" strokeWidth="1.6" strokeLinecap="round">
          <circle cx="8" cy="9.2" r="5.3" />
          <path d="M8 9.2V6.4M6.3 1.6h3.4M12.4 4.2l1-1" />
        </g>
      )}
    </svg>
  );
}

/**
 * TimeUp is the "Time's up" toast; its live region is always there, so
 * that it is read out when it shows. It belongs to the page, not to the
 * top bar it is declared in: it shows at the foot of the board.
 */
function TimeUp({ show }: { show: boolean }) {
  return createPortal(
    <div className="timer-toast-region" role="status" aria-live="polite">
      {show && <p className="timer-toast">Time's up</p>}
    </div>,
    document.body,
  );
}

/** TimerControls is the owner's popover: what to do with the timer there is, and how to start one. */
function TimerControls({ boardId, timer, phase, onAnswer, onClose }: { boardId: string; timer: Timer | null; phase: Props['phase']; onAnswer: (a: TimerAnswer) => void; onClose: () => void }) {
  const { api } = useServices();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  const [minutes, setMinutes] = useState('');
  const [forPhase, setForPhase] = useState(true);

  const act = async (a: TimerAction, close: boolean) => {
    setBusy(true);
    setError('');
    try {
      onAnswer(await api.timer(boardId, a));
      if (close) onClose();
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    } finally {
      setBusy(false);
    }
  };
  const start = (durationMs: number) => void act(phase && forPhase ? { action: 'start', durationMs, phaseId: phase.id } : { action: 'start', durationMs }, true);
  const custom = (e: FormEvent) => {
    e.preventDefault();
    const r = parseMinutes(minutes);
    if ('error' in r) setError(r.error);
    else start(r.ms);
  };

  return (
    <Popover className="timer-pop" label="Timer controls" first="button" face=".timer-face" onClose={onClose}>
      {timer && (
        <div className="timer-row">
          {timer.state === 'running' ? (
            <button type="button" disabled={busy} onClick={() => void act({ action: 'pause' }, false)}>
              Pause
            </button>
          ) : (
            <button type="button" disabled={busy} onClick={() => void act({ action: 'resume' }, false)}>
              Resume
            </button>
          )}
          <button type="button" disabled={busy} onClick={() => void act({ action: 'add', durationMs: 60_000 }, false)}>
            +1 min
          </button>
          <button type="button" disabled={busy} onClick={() => void act({ action: 'stop' }, true)}>
            Stop
          </button>
        </div>
      )}
      <p className="timer-pop-head">{timer ? 'Start over' : 'Start a timer for everyone'}</p>
      <div className="timer-row">
        {PRESET_MINUTES.map((m) => (
          <button key={m} type="button" disabled={busy} onClick={() => start(m * 60_000)}>
            {m} min
          </button>
        ))}
      </div>
      <form className="timer-row" onSubmit={custom}>
        <label>
          Minutes <input value={minutes} inputMode="decimal" placeholder="7 or 4:30" size={7} onChange={(e) => setMinutes(e.target.value)} />
        </label>
        <button type="submit" className="primary" disabled={busy}>
          Start
        </button>
      </form>
      {phase && (
        <label className="timer-phase">
          <input type="checkbox" checked={forPhase} onChange={(e) => setForPhase(e.target.checked)} /> For the phase “{phase.name}”
        </label>
      )}
      <p className="error" role="alert">
        {error}
      </p>
    </Popover>
  );
}
