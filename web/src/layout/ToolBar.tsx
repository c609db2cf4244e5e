import { useState, useSyncExternalStore } from 'react';
import { Menu, type MenuItem } from './Menu';
import { splitTools, type Tool } from './tools';

const onResize = (cb: () => void) => {
  window.addEventListener('resize', cb);
  return () => window.removeEventListener('resize', cb);
};
const windowWidth = () => window.innerWidth;

/**
 * ToolBar is the board's "Board tools" toolbar: a rail on the left on a
 * desktop, a bar across the bottom on a phone, where the tools that do not
 * fit go to a "More" menu (splitTools) instead of scrolling sideways.
 * status is read out with the tools (the note count).
 */
export function ToolBar({ tools, status }: { tools: readonly Tool[]; status?: React.ReactNode }) {
  const width = useSyncExternalStore(onResize, windowWidth);
  const [moreOpen, setMoreOpen] = useState(false);
  const { bar, more } = splitTools(tools, width);
  // In the menu there is room for the full name ("?" is "Keyboard shortcuts").
  const items: MenuItem[] = more.map((t) => ({ label: t.name ?? t.label, keys: t.keys, onSelect: t.onSelect, pressed: t.pressed, disabled: t.disabled }));
  return (
    <div className="canvas-tools" role="toolbar" aria-label="Board tools">
      {bar.map((t) => (
        <button
          key={t.id}
          type="button"
          className={[t.primary && 'primary', t.startsGroup && 'rail-panel'].filter(Boolean).join(' ') || undefined}
          onClick={t.onSelect}
          disabled={t.disabled}
          aria-pressed={t.pressed}
          aria-label={t.name}
          aria-keyshortcuts={t.keys}
          title={t.title}
        >
          {t.label}
        </button>
      ))}
      {status}
      {more.length > 0 && <Menu className="more-tools" label="More tools" buttonText="More" items={items} open={moreOpen} onOpenChange={setMoreOpen} />}
    </div>
  );
}
