// The completion list of the note editor's slash commands. Loaded lazily
// when a `/` is first typed at the start of a line. The content textarea
// keeps the focus (it owns aria-controls and aria-activedescendant); the
// editor hands its keys to this list through `keys` while it is open.
import { useEffect, useId, useState, type KeyboardEvent, type MutableRefObject } from 'react';
import { NOTE_COMMANDS } from '../api/ai';
import { filterCommands } from './slash';

interface Props {
  /** id of the listbox, which the textarea's aria-controls names. */
  id: string;
  /** query is what follows the `/`. */
  query: string;
  onPick: (command: string) => void;
  /** onDismiss: Escape was pressed; the list closes until another `/`. */
  onDismiss: () => void;
  /** onActive reports the highlighted option's element id (aria-activedescendant). */
  onActive: (id: string | undefined) => void;
  /** keys: set here, called by the editor for each key while the list is open; true = handled. */
  keys: MutableRefObject<((e: KeyboardEvent) => boolean) | null>;
}

/** SlashMenu lists the slash commands matching what follows the `/`, for the editor's textarea to pick from. */
export default function SlashMenu({ id, query, onPick, onDismiss, onActive, keys }: Props) {
  const matches = filterCommands(query, NOTE_COMMANDS);
  const [active, setActive] = useState(0);
  const optionId = useId();
  const idx = Math.min(active, Math.max(matches.length - 1, 0));

  useEffect(() => setActive(0), [query]);
  useEffect(() => {
    onActive(matches.length ? `${optionId}-${matches[idx].command}` : undefined);
  });
  useEffect(() => () => onActive(undefined), [onActive]);

  keys.current = (e) => {
    switch (e.key) {
      case 'ArrowDown':
        if (!matches.length) return false;
        setActive((idx + 1) % matches.length);
        return true;
      case 'ArrowUp':
        if (!matches.length) return false;
        setActive((idx - 1 + matches.length) % matches.length);
        return true;
      case 'Enter':
      case 'Tab':
        if (!matches.length || e.shiftKey) return false;
        onPick(matches[idx].command);
        return true;
      case 'Escape':
        onDismiss();
        return true;
      default:
        return false;
    }
  };
  useEffect(() => () => void (keys.current = null), [keys]);

  return (
    <div className="slash-menu">
      {matches.length ? (
        <ul id={id} role="listbox" aria-label="AI commands">
          {matches.map((c, i) => (
            <li
              key={c.command}
              id={`${optionId}-${c.command}`}
              role="option"
              aria-selected={i === idx}
              className={i === idx ? 'active' : undefined}
              // mousedown would take the focus from the textarea, and with it the caret.
              onMouseDown={(e) => e.preventDefault()}
              onClick={() => onPick(c.command)}
            >
              <strong>/{c.command}</strong> <span className="muted">{c.description}</span>
            </li>
          ))}
        </ul>
      ) : (
        <p id={id} className="muted" role="status">
          No AI command starts with “/{query}”. Commands: {NOTE_COMMANDS.map((c) => '/' + c.command).join(', ')}.
        </p>
      )}
      <p className="muted slash-help" aria-hidden="true">
        ↑↓ to choose, Enter or Tab to run, Esc to close
      </p>
    </div>
  );
}
