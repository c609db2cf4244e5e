import { useContext, useId, useSyncExternalStore, type KeyboardEvent } from 'react';
import { MAX_CONTENT, MAX_TITLE, codePoints } from '../canvas/notes';
import { EditorContext } from './context';
import { bindingFor } from './keymap';

const noSubscribe = () => () => {};
const nothing = () => null;

/**
 * InPlaceEditor edits a note's title and content on the canvas, over the
 * note. What is typed lives in the Editor (getEdit), so a save from
 * anywhere (a click outside, N, the full editor) takes it; only this
 * component re-renders while typing. Ctrl+Enter, Enter in the title and a
 * click outside save; Escape stops, asking first when text would be lost.
 */
export function InPlaceEditor() {
  const editor = useContext(EditorContext);
  const s = useSyncExternalStore(editor ? editor.onEditChange : noSubscribe, editor ? editor.getEdit : nothing);
  const ids = { title: useId(), content: useId() };
  if (!editor || !s) return null;
  const over = codePoints(s.values.content) > MAX_CONTENT;
  const keys = (e: KeyboardEvent, inTitle: boolean) => {
    const b = bindingFor(e, 'editing');
    const save = b?.action === 'save' || (inTitle && e.key === 'Enter' && !e.shiftKey && !e.altKey);
    if (save && !over) editor.commitEdit();
    else if (b?.action === 'cancel') editor.cancelEdit();
    else return;
    e.preventDefault();
    e.stopPropagation();
  };
  return (
    <form
      className="inplace nodrag nopan nowheel"
      aria-label="Edit note in place"
      onSubmit={(e) => {
        e.preventDefault();
        if (!over) editor.commitEdit();
      }}
      onBlur={(e) => {
        // Focus leaving the form saves, unless a question took it (Escape
        // with typed text) or the full editor did.
        if (e.currentTarget.contains(e.relatedTarget as Node | null)) return;
        const snap = editor.getSnapshot();
        if (!snap.asking && snap.editing?.mode === 'inplace') editor.commitEdit();
      }}
      onDoubleClick={(e) => e.stopPropagation()}
      onPointerDown={(e) => e.stopPropagation()}
    >
      <label className="sr-only" htmlFor={ids.title}>
        Title
      </label>
      <input id={ids.title} className="inplace-title" value={s.values.title} maxLength={MAX_TITLE} placeholder="Title" autoFocus onChange={(e) => editor.type('title', e.target.value)} onKeyDown={(e) => keys(e, true)} />
      <label className="sr-only" htmlFor={ids.content}>
        Content (Markdown)
      </label>
      <textarea id={ids.content} className="inplace-content" value={s.values.content} placeholder="Write in Markdown…" aria-invalid={over || undefined} onChange={(e) => editor.type('content', e.target.value)} onKeyDown={(e) => keys(e, false)} />
      <div className="inplace-actions">
        <button type="submit" className="primary" disabled={over} aria-keyshortcuts="Control+Enter">
          Save
        </button>
        <button type="button" onClick={() => editor.cancelEdit()} aria-keyshortcuts="Escape">
          Cancel
        </button>
        <button type="button" onClick={() => editor.openFull()} title="The full editor: Markdown preview, colour, type, AI">
          Full editor
        </button>
      </div>
    </form>
  );
}
