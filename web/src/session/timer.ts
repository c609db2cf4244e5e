// The timer's arithmetic (docs/live-protocol.md, "The timer"): what is left
// in server time, how it reads, the presets and the custom length.
import type { Timer } from '../api/types';

/** PRESET_MINUTES are the lengths the owner starts with one click. */
export const PRESET_MINUTES = [1, 3, 5, 10] as const;

/** The server's limits of a start: 1 second to 24 hours. */
export const MIN_TIMER_MS = 1000;
export const MAX_TIMER_MS = 24 * 60 * 60 * 1000;

/** remainingMs is what t has left at serverNow (the server's time, unix ms): 0 once a running timer has ended. */
export function remainingMs(t: Timer, serverNow: number): number {
  if (t.state === 'paused') return Math.max(0, t.remainingMs ?? 0);
  return Math.max(0, (t.endsAt ?? 0) - serverNow);
}

/**
 * formatRemaining reads ms left as mm:ss (h:mm:ss from an hour), counting
 * whole seconds up: 00:00 shows exactly when the time is up, and a fresh
 * five minutes reads 05:00.
 */
export function formatRemaining(ms: number): string {
  const total = Math.ceil(Math.max(0, ms) / 1000);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const two = (n: number) => String(n).padStart(2, '0');
  return h > 0 ? `${h}:${two(m)}:${two(s)}` : `${two(m)}:${two(s)}`;
}

/** spokenRemaining says ms left in words, for the timer's accessible name. */
export function spokenRemaining(ms: number): string {
  const total = Math.ceil(Math.max(0, ms) / 1000);
  if (total === 0) return "time's up";
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const part = (n: number, unit: string) => (n ? `${n} ${unit}${n === 1 ? '' : 's'}` : '');
  return [part(h, 'hour'), part(m, 'minute'), part(s, 'second')].filter(Boolean).join(' ') + ' left';
}

/**
 * parseMinutes reads the custom length: minutes ("7", "2.5") or minutes
 * and seconds ("4:30"). It answers milliseconds, or an error that says
 * what is wrong.
 */
export function parseMinutes(text: string): { ms: number } | { error: string } {
  const t = text.trim();
  let ms: number;
  const mmss = /^(\d+):([0-5]\d)$/.exec(t);
  if (mmss) ms = (Number(mmss[1]) * 60 + Number(mmss[2])) * 1000;
  else if (/^\d+(\.\d+)?$/.test(t)) ms = Math.round(Number(t) * 60_000);
  else return { error: 'Give minutes, like 7 or 2.5 or 4:30.' };
  if (ms < MIN_TIMER_MS) return { error: 'A timer runs at least a second.' };
  if (ms > MAX_TIMER_MS) return { error: 'A timer runs at most 24 hours.' };
  return { ms };
}

/**
 * EndWatch tells when a countdown reaches zero while this page watches it:
 * seen() is given each reading (the timer's endsAt as its identity, and
 * the time left) and answers true once, on the first reading at zero after
 * one above zero of the same countdown. A page opened after the end, or a
 * timer paused at zero, never rings.
 */
export class EndWatch {
  private key: number | null = null;
  private wasRunning = false;

  seen(t: Timer | null | undefined, left: number | null): boolean {
    if (!t || t.state !== 'running' || left === null) {
      this.key = null;
      this.wasRunning = false;
      return false;
    }
    const key = t.endsAt ?? 0;
    if (key !== this.key) {
      this.key = key;
      this.wasRunning = false;
    }
    if (left > 0) {
      this.wasRunning = true;
      return false;
    }
    const ended = this.wasRunning;
    this.wasRunning = false;
    return ended;
  }
}
