import { useSyncExternalStore } from 'react';
import { THEME_NAMES, themeOfPage } from './theme';

/** useTheme is the page's theme choice and the store to change it. */
export function useTheme() {
  const store = themeOfPage();
  const choice = useSyncExternalStore(store.onChange, store.getSnapshot);
  return { choice, store };
}

const ICONS = { system: '◐', light: '☀', dark: '☾' } as const;

/** ThemeToggle is a button that cycles the colour theme: system, light, dark. */
export function ThemeToggle() {
  const { choice, store } = useTheme();
  const label = `Colour theme: ${THEME_NAMES[choice]} (switch to ${THEME_NAMES[store.next()]})`;
  return (
    <button type="button" className="icon-button theme-toggle" onClick={() => store.set(store.next())} aria-label={label} title={label}>
      <span aria-hidden="true">{ICONS[choice]}</span>
    </button>
  );
}
