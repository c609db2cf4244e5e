// The note editor's AI draft panel: "Ask AI" and the slash commands stream
// a note into a preview, which the user accepts (the editor saves it like
// any edit) or rejects. Loaded lazily by NoteEditor.
import { useEffect, useId, useRef, useState, type FormEvent } from 'react';
import { renderMarkdown } from '../canvas/notes';
import { parseNoteAnswer } from '../api/ai';
import { AiErrorText } from './AiErrorText';
import { draftNote, fetchFrontmatter, streamDraft, type DraftContext, type DraftNote, type DraftSource, type DraftState, type Frontmatter } from './noteDraft';

interface Props {
  /** source: a command starts at once; "ask" first asks for the prompt. */
  source: DraftSource;
  /** context reads the note as the editor holds it now. */
  context: () => DraftContext;
  /**
   * onAccept saves the draft. frontmatter is the generate-frontmatter call,
   * already under way; nobody need wait for it.
   */
  onAccept: (note: DraftNote, frontmatter: Promise<Frontmatter | undefined>) => void;
  onClose: () => void;
}

const MAX_PROMPT = 10_000;

/** NoteAssist streams an AI draft of the note into a preview the user accepts or rejects. */
export default function NoteAssist({ source, context, onAccept, onClose }: Props) {
  const [prompt, setPrompt] = useState(source.kind === 'ask' ? source.prompt : '');
  const [state, setState] = useState<DraftState | null>(null);
  const abort = useRef<AbortController | null>(null);
  const ids = { head: useId(), prompt: useId(), preview: useId() };

  function start(s: DraftSource) {
    abort.current?.abort();
    const ac = new AbortController();
    abort.current = ac;
    void streamDraft(s, context(), (st) => abort.current === ac && setState(st), ac.signal);
  }

  // A command needs no prompt: it runs as soon as it is chosen.
  useEffect(() => {
    if (source.kind === 'command') start(source);
    return () => abort.current?.abort();
  }, []);

  function ask(e: FormEvent) {
    e.preventDefault();
    if (!prompt.trim() || state?.phase === 'streaming') return;
    start({ kind: 'ask', prompt: prompt.trim() });
  }

  const streaming = state?.phase === 'streaming';
  const text = state?.text ?? '';
  const answer = parseNoteAnswer(text);
  const draft = state && !streaming ? draftNote(text, context().title) : null;
  const partial = state?.phase === 'stopped' || state?.phase === 'failed';

  function accept() {
    if (!draft) return;
    onAccept(draft, fetchFrontmatter(context(), draft));
  }

  const heading = source.kind === 'ask' ? 'Ask AI' : `/${source.command}`;
  return (
    <section className="ai-draft" aria-labelledby={ids.head}>
      <h3 id={ids.head}>{heading}</h3>
      {source.kind === 'ask' && (
        <form className="ai-prompt" onSubmit={ask}>
          <label htmlFor={ids.prompt}>What should the AI write in this note?</label>
          <textarea
            id={ids.prompt}
            value={prompt}
            rows={2}
            maxLength={MAX_PROMPT}
            autoFocus
            onChange={(e) => setPrompt(e.target.value)}
            onKeyDown={(e) => {
              // Enter asks, Shift+Enter is a new line: the prompt is a short
              // request. Enter that ends an input method's composition is not a send.
              if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) ask(e);
            }}
          />
          <button type="submit" className="primary" disabled={!prompt.trim() || streaming}>
            Ask
          </button>
        </form>
      )}
      <p className="ai-status" role="status" aria-live="polite">
        {statusText(state)}
      </p>
      {streaming && (
        <button type="button" onClick={() => abort.current?.abort()}>
          Stop
        </button>
      )}
      {state?.phase === 'failed' && <AiErrorText error={state.error} />}
      {text && (
        <section className="ai-preview" id={ids.preview} aria-label="AI draft" aria-busy={streaming}>
          <p className="ai-preview-title">
            <span className="muted">Title: </span>
            <strong>{answer.title || <em>(the note's title stays)</em>}</strong>
          </p>
          <div className="md" dangerouslySetInnerHTML={{ __html: renderMarkdown(answer.body) }} />
        </section>
      )}
      <div className="row">
        {draft && (
          <button type="button" className="primary" onClick={accept}>
            {partial ? 'Accept what arrived' : 'Accept'}
          </button>
        )}
        <button type="button" onClick={onClose}>
          {state && text && !streaming ? 'Reject' : 'Cancel'}
        </button>
      </div>
    </section>
  );
}

function statusText(s: DraftState | null): string {
  if (!s) return '';
  switch (s.phase) {
    case 'streaming':
      return s.text ? 'The AI is writing…' : 'Waiting for the AI…';
    case 'done':
      return s.text.trim() ? 'The draft is ready. Accept it to replace the note, or reject it.' : 'The AI sent an empty answer.';
    case 'stopped':
      return s.text ? 'Stopped. What arrived is kept: you may still accept it.' : 'Stopped before any text arrived.';
    case 'failed':
      return s.text ? 'What arrived is kept: you may still accept it.' : '';
  }
}
