import { describe, expect, it } from 'vitest';
import { readTheme, saveTheme, THEME_KEY } from './theme';

function memory(init: Record<string, string> = {}) {
  const m = new Map(Object.entries(init));
  return {
    m,
    getItem: (k: string) => m.get(k) ?? null,
    setItem: (k: string, v: string) => void m.set(k, v),
    removeItem: (k: string) => void m.delete(k),
  };
}

describe('theme', () => {
  it.each([
    [undefined, 'system'],
    ['dark', 'dark'],
    ['light', 'light'],
    ['purple', 'system'],
  ])('reads %s as %s', (stored, want) => {
    expect(readTheme(memory(stored ? { [THEME_KEY]: stored } : {}))).toBe(want);
  });

  it('follows the system when storage is missing or throws', () => {
    expect(readTheme(null)).toBe('system');
    expect(readTheme({ getItem: () => { throw new Error('denied'); } })).toBe('system');
  });

  it('keeps a choice, and forgets it for system', () => {
    const s = memory();
    const root = { dataset: {} } as HTMLElement;
    saveTheme(s, root, 'dark');
    expect(root.dataset.theme).toBe('dark');
    expect(readTheme(s)).toBe('dark');
    saveTheme(s, root, 'system');
    expect(root.dataset.theme).toBe('system');
    expect(s.m.has(THEME_KEY)).toBe(false);
  });

  it('still applies a choice that storage refuses', () => {
    const root = { dataset: {} } as HTMLElement;
    saveTheme({ setItem: () => { throw new Error('full'); }, removeItem: () => {} }, root, 'light');
    expect(root.dataset.theme).toBe('light');
  });
});

import { ThemeStore, type SystemScheme } from './theme';

describe('ThemeStore', () => {
  it('cycles system, light, dark and tells subscribers', () => {
    const s = memory({ [THEME_KEY]: 'light' });
    const root = { dataset: {} } as HTMLElement;
    const t = new ThemeStore(s as unknown as Storage, root);
    expect(root.dataset.theme).toBe('light');
    let told = 0;
    t.onChange(() => told++);
    t.set(t.next());
    expect([t.getSnapshot(), root.dataset.theme, s.m.get(THEME_KEY), told]).toEqual(['dark', 'dark', 'dark', 1]);
    t.set(t.next());
    expect([t.getSnapshot(), s.m.has(THEME_KEY)]).toEqual(['system', false]);
  });
});

describe('the scheme', () => {
  it('is the choice, or for system the system scheme, and follows the system as it changes', () => {
    let change = () => {};
    const system = { matches: true, addEventListener: (_t: string, f: () => void) => void (change = f) };
    const root = { dataset: {} } as HTMLElement;
    const t = new ThemeStore(memory() as unknown as Storage, root, system as unknown as SystemScheme);
    expect([root.dataset.theme, root.dataset.scheme]).toEqual(['system', 'dark']);
    system.matches = false;
    change();
    expect(root.dataset.scheme).toBe('light');
    t.set('dark');
    expect(root.dataset.scheme).toBe('dark');
    system.matches = true;
    change();
    t.set('light');
    expect(root.dataset.scheme).toBe('light');
    change();
    expect(root.dataset.scheme).toBe('light');
  });
});
