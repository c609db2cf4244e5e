import { afterEach, describe, expect, it, vi } from 'vitest';
import { animationFrame, Notifier } from './notify';

describe('Notifier', () => {
  it('calls each subscriber once per frame, however many changes', () => {
    const due: (() => void)[] = [];
    const n = new Notifier((cb) => void due.push(cb));
    const a = vi.fn();
    const b = vi.fn();
    n.subscribe(a);
    const unsubB = n.subscribe(b);
    n.notify();
    n.notify();
    expect(due).toHaveLength(1);
    unsubB();
    due.shift()!();
    expect(a).toHaveBeenCalledTimes(1);
    expect(b).not.toHaveBeenCalled();
    n.notify();
    expect(due).toHaveLength(1);
    n.close();
    due.shift()!();
    expect(a).toHaveBeenCalledTimes(1);
  });
});

describe('animationFrame', () => {
  afterEach(() => {
    vi.unstubAllGlobals();
    vi.useRealTimers();
  });

  it('uses a timer where there are no frames (tests, workers)', () => {
    vi.useFakeTimers();
    const cb = vi.fn();
    animationFrame(cb);
    vi.advanceTimersByTime(15);
    expect(cb).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(cb).toHaveBeenCalledTimes(1);
  });

  it('runs at the next frame, once, with a timer in case the tab is hidden before it', () => {
    vi.useFakeTimers();
    const frames: (() => void)[] = [];
    vi.stubGlobal('requestAnimationFrame', (f: () => void) => frames.push(f));
    const cb = vi.fn();
    animationFrame(cb);
    frames[0]();
    vi.advanceTimersByTime(1000);
    expect(cb).toHaveBeenCalledTimes(1);
    animationFrame(cb); // no frame comes (hidden tab)
    vi.advanceTimersByTime(250);
    expect(cb).toHaveBeenCalledTimes(2);
  });

  it('does not wait for frames in a hidden tab', () => {
    vi.useFakeTimers();
    const raf = vi.fn();
    vi.stubGlobal('requestAnimationFrame', raf);
    vi.stubGlobal('document', { visibilityState: 'hidden' });
    const cb = vi.fn();
    animationFrame(cb);
    vi.advanceTimersByTime(16);
    expect(raf).not.toHaveBeenCalled();
    expect(cb).toHaveBeenCalledTimes(1);
  });
});
