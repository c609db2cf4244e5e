import { describe, expect, it } from 'vitest';
import type { Timer } from '../api/types';
import { EndWatch, formatRemaining, parseMinutes, remainingMs, spokenRemaining } from './timer';

const running = (endsAt: number): Timer => ({ state: 'running', durationMs: 300_000, endsAt, startedBy: 'ana@example.com', updatedAt: 0 });
const paused = (left: number): Timer => ({ state: 'paused', durationMs: 300_000, remainingMs: left, startedBy: 'ana@example.com', updatedAt: 0 });

describe('remainingMs', () => {
  it('counts a running timer down to zero, never below, in server time', () => {
    expect(remainingMs(running(10_000), 4_000)).toBe(6_000);
    expect(remainingMs(running(10_000), 10_000)).toBe(0);
    expect(remainingMs(running(10_000), 99_999)).toBe(0);
  });
  it('holds a paused timer still, whatever the time', () => {
    expect(remainingMs(paused(42_500), 0)).toBe(42_500);
    expect(remainingMs(paused(42_500), 1e13)).toBe(42_500);
    expect(remainingMs(paused(0), 5)).toBe(0);
  });
});

describe('formatRemaining', () => {
  it.each([
    [300_000, '05:00'],
    [299_001, '05:00'],
    [299_000, '04:59'],
    [1, '00:01'],
    [0, '00:00'],
    [-5, '00:00'],
    [59_999, '01:00'],
    [600_000, '10:00'],
    [3_599_000, '59:59'],
    [3_600_000, '1:00:00'],
    [86_400_000, '24:00:00'],
  ])('%d ms reads %s', (ms, want) => expect(formatRemaining(ms)).toBe(want));

  it('says it in words', () => {
    expect(spokenRemaining(300_000)).toBe('5 minutes left');
    expect(spokenRemaining(61_000)).toBe('1 minute 1 second left');
    expect(spokenRemaining(3_600_000)).toBe('1 hour left');
    expect(spokenRemaining(0)).toBe("time's up");
  });
});

describe('parseMinutes', () => {
  it.each([
    ['7', 420_000],
    [' 2.5 ', 150_000],
    ['4:30', 270_000],
    ['0:01', 1000],
    ['1440', 86_400_000],
  ])('%s is %d ms', (text, ms) => expect(parseMinutes(text)).toEqual({ ms }));

  it.each(['', 'abc', '-3', '4:60', '1e3', '0', '0:00', '1440.01', '1441'])('refuses %s with a reason', (text) => {
    const r = parseMinutes(text);
    expect('error' in r && r.error.length > 0).toBe(true);
  });
});

describe('EndWatch', () => {
  it('rings once when a countdown it watched reaches zero', () => {
    const w = new EndWatch();
    const t = running(10_000);
    expect(w.seen(t, 3000)).toBe(false);
    expect(w.seen(t, 0)).toBe(true);
    expect(w.seen(t, 0)).toBe(false);
  });
  it('does not ring for a timer that had ended before the page saw it, nor for one paused at zero', () => {
    const w = new EndWatch();
    expect(w.seen(running(10_000), 0)).toBe(false);
    expect(w.seen(paused(0), 0)).toBe(false);
  });
  it('rings again for a countdown given more time after its end', () => {
    const w = new EndWatch();
    expect(w.seen(running(10_000), 1)).toBe(false);
    expect(w.seen(running(10_000), 0)).toBe(true);
    expect(w.seen(running(70_000), 60_000)).toBe(false);
    expect(w.seen(running(70_000), 0)).toBe(true);
  });
  it('forgets a stopped timer, and a reading without a clock changes nothing', () => {
    const w = new EndWatch();
    expect(w.seen(running(10_000), 5)).toBe(false);
    expect(w.seen(null, null)).toBe(false);
    expect(w.seen(running(10_000), 0)).toBe(false);
  });
});
