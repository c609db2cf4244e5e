// The note menu (right-click, long-press, Shift+F10 or the menu key on a
// note): it renders the Editor's menuModel and sends its choices back; what
// each does is the Editor's (docs/web-client.md, "Keyboard and touch").
import { useContext, useEffect, useLayoutEffect, useRef, useState, type KeyboardEvent } from 'react';
import { EditorContext } from './context';
import type { NoteMenu as Open } from './Editor';
import { placeMenu, type XY } from './geometry';
import { background } from '../canvas/notes';
import { LockIcon } from '../canvas/LockIcon';

/**
 * NoteMenu is the ARIA menu of one note: the arrow keys, Home and End move
 * between its items, Escape (or Tab) closes it and gives the focus back to
 * the note, a press outside closes it. Placed at the point it was opened
 * at (or under the note), flipped and shifted to stay on the screen.
 */
export function NoteMenu({ menu }: { menu: Open }) {
  const editor = useContext(EditorContext)!;
  const list = useRef<HTMLDivElement>(null);
  const [pos, setPos] = useState<XY | null>(null);
  const model = editor.menuModel();
  const title = editor.note(menu.id)?.title || 'untitled';

  useLayoutEffect(() => {
    const el = list.current;
    if (!el) return;
    let at = menu.at;
    if (!at) {
      const note = document.querySelector(`[data-note-id="${CSS.escape(menu.id)}"]`)?.getBoundingClientRect();
      at = note ? { x: note.left + 12, y: note.top + Math.min(note.height, 40) } : { x: window.innerWidth / 2, y: window.innerHeight / 3 };
    }
    const r = el.getBoundingClientRect();
    setPos(placeMenu(at, { w: r.width, h: r.height }, { w: window.innerWidth, h: window.innerHeight }));
  }, [menu]);

  useEffect(() => {
    if (!pos) return;
    list.current?.querySelector<HTMLElement>('[role^="menuitem"]')?.focus();
  }, [pos]);

  useEffect(() => {
    const outside = (e: PointerEvent) => {
      if (!list.current?.contains(e.target as Node)) editor.closeMenu(false);
    };
    document.addEventListener('pointerdown', outside);
    return () => document.removeEventListener('pointerdown', outside);
  }, [editor]);

  if (!model) return null;

  const onKeyDown = (e: KeyboardEvent) => {
    e.stopPropagation(); // the canvas's shortcuts listen on the document
    const all = [...(list.current?.querySelectorAll<HTMLElement>('[role^="menuitem"]') ?? [])];
    const i = all.indexOf(document.activeElement as HTMLElement);
    const go = (j: number) => {
      e.preventDefault();
      all[(j + all.length) % all.length]?.focus();
    };
    if (e.key === 'ArrowDown' || e.key === 'ArrowRight') go(i + 1);
    else if (e.key === 'ArrowUp' || e.key === 'ArrowLeft') go(i - 1);
    else if (e.key === 'Home') go(0);
    else if (e.key === 'End') go(all.length - 1);
    else if (e.key === 'Escape' || e.key === 'Tab' || e.key === 'ContextMenu' || (e.shiftKey && e.key === 'F10')) {
      e.preventDefault();
      editor.closeMenu();
    }
  };

  const [first, ...rest] = model.entries;
  const item = (c: (typeof model.entries)[number]) => (
    <button key={c.command} type="button" role="menuitem" tabIndex={-1} className={c.command === 'delete' ? 'danger-item' : undefined} onClick={() => editor.chooseFromMenu(c.command)}>
      {c.label}
    </button>
  );
  return (
    <div
      ref={list}
      className="menu note-menu"
      role="menu"
      aria-label={`Note menu: ${title}`}
      onKeyDown={onKeyDown}
      onContextMenu={(e) => e.preventDefault()}
      // Measured first (hidden), then placed: no flash at the wrong spot.
      style={pos ? { left: pos.x, top: pos.y } : { left: 0, top: 0, visibility: 'hidden' }}
    >
      {model.colours.length ? (
        <>
          {item(first)}
          {rest.slice(0, 1).map(item)}
          <div role="group" aria-label="Colour" className="note-menu-colours separated">
            <span aria-hidden="true" className="note-menu-label">
              Colour
            </span>
            {model.colours.map((c) => (
              <button
                key={c}
                type="button"
                role="menuitemradio"
                aria-checked={model.colour === c}
                aria-label={c}
                title={c}
                tabIndex={-1}
                className="swatch"
                style={{ background: background(c) }}
                onClick={() => editor.chooseColour(c)}
              />
            ))}
          </div>
          {rest.slice(1).map(item)}
        </>
      ) : (
        model.entries.map(item)
      )}
      {/* Why the note only opens here (a lock, someone else's note): docs/api.md, "Locks and roles". */}
      {model.reason && (
        <p className="note-menu-reason" role="note">
          <LockIcon label={null} className="reason-lock" />{' '}
          {model.reason}
        </p>
      )}
    </div>
  );
}
