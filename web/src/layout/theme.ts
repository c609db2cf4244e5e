// The colour theme: follow the system (prefers-color-scheme), or a choice
// kept in localStorage. The choice is written on <html data-theme>, and the
// scheme it comes to (light or dark; "system" resolved from the media
// query, and again whenever the system changes) on <html data-scheme>,
// which the CSS custom properties in app.css key on: one dark palette,
// whichever way it was chosen.

/** ThemeChoice is what the person picked in the board menu. */
export type ThemeChoice = 'system' | 'light' | 'dark';

/** THEME_KEY is the localStorage key of the choice. */
export const THEME_KEY = 'corkboard.theme';

export const THEME_CHOICES: readonly ThemeChoice[] = ['system', 'light', 'dark'];

/** readTheme returns the stored choice; anything else (nothing, garbage, no storage) is "system". */
export function readTheme(storage: Pick<Storage, 'getItem'> | null): ThemeChoice {
  let v: string | null = null;
  try {
    v = storage?.getItem(THEME_KEY) ?? null;
  } catch {
    // Storage can throw (disabled cookies, some private modes): follow the system.
  }
  return v === 'light' || v === 'dark' ? v : 'system';
}

/** saveTheme stores the choice ("system" removes it) and applies it to root (systemDark: the system asks for dark). */
export function saveTheme(storage: Pick<Storage, 'setItem' | 'removeItem'> | null, root: HTMLElement, choice: ThemeChoice, systemDark = false): void {
  try {
    if (choice === 'system') storage?.removeItem(THEME_KEY);
    else storage?.setItem(THEME_KEY, choice);
  } catch {
    // Not kept, but still applied for this page.
  }
  applyTheme(root, choice, systemDark);
}

/** applyTheme marks root with the choice and the scheme it comes to, for the CSS. */
export function applyTheme(root: HTMLElement, choice: ThemeChoice, systemDark = false): void {
  root.dataset.theme = choice;
  root.dataset.scheme = choice === 'system' ? (systemDark ? 'dark' : 'light') : choice;
}

/** SystemScheme is the part of a MediaQueryList for (prefers-color-scheme: dark) the store reads. */
export type SystemScheme = Pick<MediaQueryList, 'matches' | 'addEventListener'>;

/** storageOrNull is window.localStorage, or null where reading it throws. */
export function storageOrNull(): Storage | null {
  try {
    return window.localStorage;
  } catch {
    return null;
  }
}

/** ThemeStore is the page's theme choice with a subscription (the header's toggle and the board menu show the same). */
export class ThemeStore {
  private choice: ThemeChoice;
  private readonly listeners = new Set<() => void>();

  constructor(
    private readonly storage: Storage | null,
    private readonly root: HTMLElement,
    private readonly system: SystemScheme | null = null,
  ) {
    this.choice = readTheme(storage);
    applyTheme(root, this.choice, this.systemDark());
    // "system" follows the system as it changes (a dark mode at sunset).
    system?.addEventListener('change', () => applyTheme(root, this.choice, this.systemDark()));
  }

  private systemDark(): boolean {
    return this.system?.matches ?? false;
  }

  getSnapshot = (): ThemeChoice => this.choice;

  onChange = (cb: () => void): (() => void) => {
    this.listeners.add(cb);
    return () => this.listeners.delete(cb);
  };

  /** set keeps and applies a choice. */
  set(choice: ThemeChoice): void {
    this.choice = choice;
    saveTheme(this.storage, this.root, choice, this.systemDark());
    for (const l of [...this.listeners]) l();
  }

  /** next is the choice after the current one (the toggle's cycle: system, light, dark). */
  next(): ThemeChoice {
    return THEME_CHOICES[(THEME_CHOICES.indexOf(this.choice) + 1) % THEME_CHOICES.length];
  }
}

let pageTheme: ThemeStore | null = null;

/** themeOfPage is the page's one ThemeStore, made (and applied) on first use; main.tsx calls it before the first render so nothing flashes. */
export function themeOfPage(): ThemeStore {
  const system = typeof window.matchMedia === 'function' ? window.matchMedia('(prefers-color-scheme: dark)') : null;
  return (pageTheme ??= new ThemeStore(storageOrNull(), document.documentElement, system));
}

/** THEME_NAMES are the choices as the menu and the toggle say them. */
export const THEME_NAMES: Record<ThemeChoice, string> = { system: 'System', light: 'Light', dark: 'Dark' };
