import { lazy, Suspense, useCallback, useId, useRef, useState, type FormEvent, type KeyboardEvent } from 'react';
import type { Note } from '../api/types';
import { Dialog } from '../app/Dialog';
import { slashQuery, removeSlash, type SlashQuery } from '../ai/slash';
import type { DraftContext, DraftNote, DraftSource, Frontmatter } from '../ai/noteDraft';
import type { Field } from '../ai/analyse';
import { COLORS, TYPES, MAX_CONTENT, MAX_TITLE, codePoints, renderMarkdown } from './notes';

// The AI parts are loaded when first used (Ask AI, a `/` at the start of a
// line, Analyse): the editor opens without them.
const NoteAssist = lazy(() => import('../ai/NoteAssist'));
const SlashMenu = lazy(() => import('../ai/SlashMenu'));
const Analyse = lazy(() => import('../ai/Analyse'));
const NoteHints = lazy(() => import('../ai/NoteHints'));

/** AiContext is what the editor's AI parts need beyond the note: without it they are not offered. */
export interface AiContext {
  boardId: string;
  /** allNotes reads the board's notes when a request is made. */
  allNotes: () => Note[];
}

/**
 * NoteEditor edits title, colour, type and content. The saved note is the
 * original with those four fields changed: fields other clients keep on the
 * note survive unchanged.
 */
export function NoteEditor({ note, readOnly, onSave, onClose, onHistory, ai }: { note: Note; readOnly: boolean; onSave: (n: Note) => void; onClose: () => void; onHistory?: () => void; ai?: AiContext }) {
  const [title, setTitle] = useState(note.title ?? '');
  const [color, setColor] = useState(note.color ?? '');
  const [type, setType] = useState(note.type ?? '');
  const [content, setContent] = useState(note.content ?? '');
  const ids = { title: useId(), color: useId(), type: useId(), content: useId(), count: useId(), preview: useId(), slash: useId(), hints: useId() };
  const count = codePoints(content);
  const over = count > MAX_CONTENT;
  const colors = Object.keys(COLORS).includes(color) || !color ? Object.keys(COLORS) : [...Object.keys(COLORS), color];
  const types = (TYPES as readonly string[]).includes(type) || !type ? TYPES : [...TYPES, type];

  // AI: the draft panel (Ask AI or a command), the slash list, the analysis, and frontmatter hints.
  const withAi = !!ai && !readOnly;
  const [assist, setAssist] = useState<{ source: DraftSource; n: number } | null>(null);
  const [analysing, setAnalysing] = useState(false);
  const [slash, setSlash] = useState<SlashQuery | null>(null);
  const [dismissed, setDismissed] = useState(-1);
  const [activeOption, setActiveOption] = useState<string | undefined>();
  const [hints, setHints] = useState<Frontmatter | null>(null);
  const slashKeys = useRef<((e: KeyboardEvent) => boolean) | null>(null);
  const textarea = useRef<HTMLTextAreaElement>(null);
  const latest = useRef({ title, content });
  latest.current = { title, content };
  const slashOpen = withAi && !!slash && slash.start !== dismissed;

  function save(e: FormEvent) {
    e.preventDefault();
    if (over || readOnly) return;
    onSave({ ...note, title, color, type, content });
    onClose();
  }

  /** commit puts an AI result in the fields and saves it like the Save button (push, changelog, undo), keeping the editor open. */
  function commit(t: string, c: string) {
    setTitle(t);
    setContent(c);
    latest.current = { title: t, content: c };
    onSave({ ...note, title: t, color, type, content: c });
  }

  const context = useCallback(
    (): DraftContext => ({ boardId: ai!.boardId, noteId: note.id, title: latest.current.title, content: latest.current.content, allNotes: ai!.allNotes() }),
    [ai, note.id],
  );

  function track(text: string, caret: number) {
    const q = slashQuery(text, caret);
    setSlash(q);
    if (!q) setDismissed(-1);
  }

  function pick(command: string) {
    if (!slash) return;
    const r = removeSlash(latest.current.content, slash);
    setContent(r.text);
    latest.current = { ...latest.current, content: r.text };
    setSlash(null);
    setHints(null);
    setAssist({ source: { kind: 'command', command }, n: Date.now() });
    requestAnimationFrame(() => textarea.current?.setSelectionRange(r.caret, r.caret));
  }

  function accept(d: DraftNote, frontmatter: Promise<Frontmatter | undefined>) {
    commit(d.title, d.content);
    setAssist(null);
    // Fired by the panel already; the hints show up when (and if) they come.
    void frontmatter.then((f) => f && setHints(f));
  }

  return (
    <>
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
          <textarea
            ref={textarea}
            id={ids.content}
            value={content}
            readOnly={readOnly}
            rows={14}
            onChange={(e) => {
              setContent(e.target.value);
              if (withAi) track(e.target.value, e.target.selectionStart);
            }}
            onSelect={(e) => withAi && track(e.currentTarget.value, e.currentTarget.selectionStart)}
            onKeyDown={(e) => {
              if (slashOpen && slashKeys.current?.(e)) {
                // Escape closes the list, not the dialog; Enter and Tab pick, not type.
                e.preventDefault();
                e.stopPropagation();
              }
            }}
            onBlur={() => setSlash(null)}
            aria-describedby={withAi ? `${ids.count} ${ids.hints}` : ids.count}
            aria-invalid={over || undefined}
            // The list of commands is a listbox this field controls while a `/` is typed (see SlashMenu).
            aria-autocomplete={withAi ? 'list' : undefined}
            aria-controls={slashOpen ? ids.slash : undefined}
            aria-activedescendant={slashOpen ? activeOption : undefined}
          />
          {slashOpen && slash && (
            <Suspense fallback={<p className="muted">Loading the AI commands…</p>}>
              <SlashMenu id={ids.slash} query={slash.query} onPick={pick} onDismiss={() => setDismissed(slash.start)} onActive={setActiveOption} keys={slashKeys} />
            </Suspense>
          )}
          <p id={ids.count} className={over ? 'error' : 'muted'} aria-live="polite">
            {count.toLocaleString()} / {MAX_CONTENT.toLocaleString()} characters{over ? ' — too long: shorten it to save' : ''}
          </p>
          {withAi && (
            <p id={ids.hints} className="muted">
              Type / at the start of a line for AI commands.
            </p>
          )}
        </div>
        <section className="editor-preview" aria-labelledby={ids.preview}>
          <h3 id={ids.preview}>Preview</h3>
          <div className="md" dangerouslySetInnerHTML={{ __html: renderMarkdown(content) }} />
          {hints && (
            <Suspense fallback={null}>
              <NoteHints hints={hints} />
            </Suspense>
          )}
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
          {withAi && (
            <button type="button" aria-expanded={assist?.source.kind === 'ask'} onClick={() => setAssist(assist?.source.kind === 'ask' ? null : { source: { kind: 'ask', prompt: '' }, n: Date.now() })}>
              Ask AI
            </button>
          )}
          {withAi && (
            <button type="button" onClick={() => setAnalysing(true)} disabled={!content.trim() || over}>
              Analyse
            </button>
          )}
        </div>
      </form>
      {withAi && assist && (
        <Suspense fallback={<p role="status">Loading the AI…</p>}>
          <NoteAssist key={assist.n} source={assist.source} context={context} onAccept={accept} onClose={() => setAssist(null)} />
        </Suspense>
      )}
    </Dialog>
    {/* Beside the editor's dialog, not inside it: Escape (the dialog's
        cancel event) would otherwise close the editor with the analysis. */}
    {withAi && analysing && (
      <Suspense fallback={<p role="status">Loading the analysis…</p>}>
        <Analyse
          target={{ kind: 'note', boardId: ai!.boardId, noteId: note.id, title, content }}
          onApply={(_f: Field, value: string) => commit(latest.current.title, value)}
          onClose={() => setAnalysing(false)}
        />
      </Suspense>
    )}
    </>
  );
}
