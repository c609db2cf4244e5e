import { lazy, Suspense, useCallback, useEffect, useId, useRef, useState, useSyncExternalStore, type FormEvent, type KeyboardEvent } from 'react';
import type { Note } from '../api/types';
import type { PresenceStore } from '../sync/presence';
import { Dialog } from '../app/Dialog';
import { slashQuery, removeSlash, type SlashQuery } from '../ai/slash';
import type { DraftContext, DraftNote, DraftSource, Frontmatter } from '../ai/noteDraft';
import type { Field } from '../ai/analyse';
import { COLORS, TYPES, MAX_CONTENT, MAX_TITLE, codePoints, renderMarkdown } from './notes';
import { changedMeanwhile, edit, follow, openEditor, saved, toSave, touched, type EditorField, type EditorState } from './editorState';
import { editorNotice } from './peopleView';
import { LockIcon } from './LockIcon';

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

/** EditorSave is what Save hands over: the note with my changed fields, and the note it was opened on (the merge's base). */
export type EditorSave = { row: Note; base: Note };

const FIELD_NAMES: Record<EditorField, string> = { title: 'title', color: 'colour', type: 'type', content: 'content' };

interface Props {
  /** note is the note as it is now (as last seen, when gone). */
  note: Note;
  /** initial: the fields as they were being edited elsewhere (in place on the canvas): what was typed carries over. */
  initial?: EditorState;
  /** gone: the note was deleted (by someone else) while the editor was open. */
  gone?: boolean;
  /** presence: who else is editing (and where this editor announces itself). */
  presence?: PresenceStore;
  readOnly: boolean;
  /** readOnlyReason: why the note opens read only when the person may edit the board (a lock, someone else's note). */
  readOnlyReason?: string | null;
  /** onSave pushes a save and returns the note as shown after it. */
  onSave: (s: EditorSave) => Note | undefined;
  onClose: () => void;
  onHistory?: () => void;
  ai?: AiContext;
}

/** meanwhileText says what Save will do with fields someone else changed while I was changing them too. */
function meanwhileText(fields: EditorField[]): string {
  const texts = fields.filter((f) => f === 'title' || f === 'content');
  const values = fields.filter((f) => f === 'color' || f === 'type');
  const names = (fs: EditorField[]) => fs.map((f) => FIELD_NAMES[f]).join(' and ');
  const out: string[] = [];
  if (texts.length) out.push(`Someone else changed the ${names(texts)} too: saving merges your lines with theirs (where you both changed the same lines, yours are kept and theirs stay in the History).`);
  if (values.length) out.push(`Someone else changed the ${names(values)} too: saving sets yours.`);
  return out.join(' ');
}

const noSubscribe = () => () => {};
const NOBODY: readonly never[] = [];

/**
 * NoteEditor edits title, colour, type and content, and follows the note
 * while it is open (editorState.ts): a change someone else makes shows in
 * every field not touched here. Save sends the touched fields on the note
 * the editor opened on, so the merge keeps others' lines; fields other
 * clients keep on the note survive unchanged. Closing with unsaved changes
 * asks first.
 */
export function NoteEditor({ note, initial, gone = false, presence, readOnly, readOnlyReason, onSave, onClose, onHistory, ai }: Props) {
  const [state, setState] = useState<EditorState>(() => initial ?? openEditor(note));
  // Follow the note: someone else's change shows in the untouched fields at once.
  const [seen, setSeen] = useState(note);
  let s = state;
  if (seen !== note) {
    setSeen(note);
    s = follow(state, note);
    if (s !== state) setState(s);
  }
  const { title, color, type, content } = s.values;
  const set = (f: EditorField, v: string) => setState((st) => edit(st, f, v));
  const setTitle = (v: string) => set('title', v);
  const setContent = (v: string) => set('content', v);
  const dirty = !readOnly && touched(s).length > 0;
  const meanwhile = gone ? [] : changedMeanwhile(s, note);
  const [discarding, setDiscarding] = useState<null | (() => void)>(null);

  // "Is editing": the others see this editor open (not a viewer's: reading is not editing).
  useEffect(() => {
    if (!presence || readOnly) return;
    presence.setEditing(note.id);
    return () => presence.setEditing(null);
  }, [presence, readOnly, note.id]);
  const others = useSyncExternalStore(presence ? presence.onChange : noSubscribe, () => presence?.getSnapshot().editors.get(note.id) ?? NOBODY);
  const notice = editorNotice(others);

  /** leave closes the editor (then does next), asking first when typed changes would be lost. */
  function leave(next: () => void) {
    if (dirty) setDiscarding(() => next);
    else next();
  }
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
  const latest = useRef(s);
  latest.current = s;
  const slashOpen = withAi && !!slash && slash.start !== dismissed;

  function save(e: FormEvent) {
    e.preventDefault();
    if (over || readOnly) return;
    const out = toSave(s);
    if (out) onSave(out);
    onClose();
  }

  /** commit puts an AI result in the fields and saves it like the Save button (push, changelog, undo), keeping the editor open. */
  function commit(t: string, c: string) {
    const next = edit(edit(latest.current, 'title', t), 'content', c);
    const out = toSave(next);
    const now = out ? onSave(out) : undefined;
    const after = now ? saved(now) : next;
    latest.current = after;
    setState(after);
    setSeen(now ?? note);
  }

  const context = useCallback(
    (): DraftContext => ({ boardId: ai!.boardId, noteId: note.id, title: latest.current.values.title, content: latest.current.values.content, allNotes: ai!.allNotes() }),
    [ai, note.id],
  );

  function track(text: string, caret: number) {
    const q = slashQuery(text, caret);
    setSlash(q);
    if (!q) setDismissed(-1);
  }

  function pick(command: string) {
    if (!slash) return;
    const r = removeSlash(latest.current.values.content, slash);
    setContent(r.text);
    latest.current = edit(latest.current, 'content', r.text);
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
    <Dialog title={readOnly ? 'Note' : 'Edit note'} onClose={() => leave(onClose)} wide>
      <form onSubmit={save} className="editor">
        {(notice || gone || meanwhile.length > 0 || (readOnly && readOnlyReason)) && (
          <div className="editor-notices">
            {readOnly && readOnlyReason && (
              <p className="lock-reason" role="status">
                <LockIcon label={null} className="reason-lock" />{' '}
                {readOnlyReason}
              </p>
            )}
            {notice && (
              <p className="editing-notice" role="status">
                <span className="dot" aria-hidden="true" style={{ background: others[0]?.color }} /> {notice}
              </p>
            )}
            {gone && (
              <p className="warning" role="alert">
                Someone deleted this note while it was open here.{readOnly ? '' : ' Saving brings it back.'}
              </p>
            )}
            {!gone && meanwhile.length > 0 && (
              <p className="muted" role="status">
                {meanwhileText(meanwhile)}
              </p>
            )}
          </div>
        )}
        <div className="editor-fields">
          <label htmlFor={ids.title}>Title</label>
          <input id={ids.title} value={title} maxLength={MAX_TITLE} readOnly={readOnly} onChange={(e) => setTitle(e.target.value)} data-autofocus />
          <div className="row">
            <div>
              <label htmlFor={ids.color}>Colour</label>
              <select id={ids.color} value={color} disabled={readOnly} onChange={(e) => set('color', e.target.value)}>
                {colors.map((c) => (
                  <option key={c} value={c}>
                    {c}
                  </option>
                ))}
              </select>
            </div>
            <div>
              <label htmlFor={ids.type}>Type</label>
              <select id={ids.type} value={type} disabled={readOnly} onChange={(e) => set('type', e.target.value)}>
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
          <button type="button" onClick={() => leave(onClose)}>
            {readOnly ? 'Close' : 'Cancel'}
          </button>
          {onHistory && (
            <button type="button" onClick={() => leave(onHistory)}>
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
          onApply={(_f: Field, value: string) => commit(latest.current.values.title, value)}
          onClose={() => setAnalysing(false)}
        />
      </Suspense>
    )}
    {/* Beside the editor's dialog too, so that Escape here keeps the editor. */}
    {discarding && (
      <Dialog title="Discard your changes?" onClose={() => setDiscarding(null)}>
        <p>What you typed in this note has not been saved.</p>
        <div className="row dialog-actions">
          <button
            type="button"
            className="primary danger"
            onClick={() => {
              const next = discarding;
              setDiscarding(null);
              next();
            }}
          >
            Discard
          </button>
          <button type="button" data-autofocus onClick={() => setDiscarding(null)}>
            Keep editing
          </button>
        </div>
      </Dialog>
    )}
    </>
  );
}
