import { useId, useState, type FormEvent } from 'react';
import type { Note } from '../api/types';
import { Dialog } from '../app/Dialog';
import { COLORS, TYPES, MAX_CONTENT, MAX_TITLE, codePoints, renderMarkdown } from './notes';

/**
 * NoteEditor edits title, colour, type and content. The saved note is the
 * original with those four fields changed: fields other clients keep on the
 * note survive unchanged.
 */
export function NoteEditor({ note, readOnly, onSave, onClose, onHistory }: { note: Note; readOnly: boolean; onSave: (n: Note) => void; onClose: () => void; onHistory?: () => void }) {
  const [title, setTitle] = useState(note.title ?? '');
  const [color, setColor] = useState(note.color ?? '');
  const [type, setType] = useState(note.type ?? '');
  const [content, setContent] = useState(note.content ?? '');
  const ids = { title: useId(), color: useId(), type: useId(), content: useId(), count: useId(), preview: useId() };
  const count = codePoints(content);
  const over = count > MAX_CONTENT;
  const colors = Object.keys(COLORS).includes(color) || !color ? Object.keys(COLORS) : [...Object.keys(COLORS), color];
  const types = (TYPES as readonly string[]).includes(type) || !type ? TYPES : [...TYPES, type];

  function save(e: FormEvent) {
    e.preventDefault();
    if (over || readOnly) return;
    onSave({ ...note, title, color, type, content });
    onClose();
  }

  return (
    <Dialog title={readOnly ? 'Note' : 'Edit note'} onClose={onClose} wide>
      <form onSubmit={save} className="editor">
        <div className="editor-fields">
          <label htmlFor={ids.title}>Title</label>
          <input id={ids.title} value={title} maxLength={MAX_TITLE} readOnly={readOnly} onChange={(e) => setTitle(e.target.value)} data-autofocus />
          <div className="row">
            <div>
              <label htmlFor={ids.color}>Colour</label>
              <select id={ids.color} value={color} disabled={readOnly} onChange={(e) => setColor(e.target.value)}>
                {colors.map((c) => (
                  <option key={c} value={c}>
                    {c}
                  </option>
                ))}
              </select>
            </div>
            <div>
              <label htmlFor={ids.type}>Type</label>
              <select id={ids.type} value={type} disabled={readOnly} onChange={(e) => setType(e.target.value)}>
                {types.map((t) => (
                  <option key={t} value={t}>
                    {t}
                  </option>
                ))}
              </select>
            </div>
          </div>
          <label htmlFor={ids.content}>Content (Markdown)</label>
          <textarea id={ids.content} value={content} readOnly={readOnly} rows={14} onChange={(e) => setContent(e.target.value)} aria-describedby={ids.count} aria-invalid={over || undefined} />
          <p id={ids.count} className={over ? 'error' : 'muted'} aria-live="polite">
            {count.toLocaleString()} / {MAX_CONTENT.toLocaleString()} characters{over ? ' — too long: shorten it to save' : ''}
          </p>
        </div>
        <section className="editor-preview" aria-labelledby={ids.preview}>
          <h3 id={ids.preview}>Preview</h3>
          <div className="md" dangerouslySetInnerHTML={{ __html: renderMarkdown(content) }} />
        </section>
        <div className="row editor-actions">
          {!readOnly && (
            <button type="submit" className="primary" disabled={over}>
              Save
            </button>
          )}
          <button type="button" onClick={onClose}>
            {readOnly ? 'Close' : 'Cancel'}
          </button>
          {onHistory && (
            <button type="button" onClick={onHistory}>
              History
            </button>
          )}
        </div>
      </form>
    </Dialog>
  );
}
