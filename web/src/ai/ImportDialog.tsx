// "Import document" (issue 12): a pasted or uploaded document becomes notes
// through document-to-notes; the user picks which of the proposed notes to
// add. Loaded lazily by BoardScreen.
import { useEffect, useId, useMemo, useRef, useState } from 'react';
import { Dialog } from '../app/Dialog';
import { aiJson } from '../api/ai';
import type { SyncClient } from '../sync/client';
import { background, renderMarkdown } from '../canvas/notes';
import { randomId } from '../boards/ids';
import { AiErrorText } from './AiErrorText';
import { FILE_TYPES, MAX_DOCUMENT, documentLength, documentProblem, documentRequest, excerpt, importedNotes, noteColor, noteType, readDocument, type DocumentNotes, type ProposedNote } from './importDoc';
import { useAiRequest, useFocusAfterSending } from './useAiRequest';
import './importgen.css';

interface Props {
  client: SyncClient;
  onClose: () => void;
}

type Phase = { kind: 'edit' } | { kind: 'sending' } | { kind: 'preview'; notes: ProposedNote[]; picked: boolean[] } | { kind: 'added'; count: number; besides: boolean };

const fmt = (n: number) => n.toLocaleString('en');

/** ImportDialog turns a document into notes on the board, after a preview. */
export default function ImportDialog({ client, onClose }: Props) {
  const id = useId();
  const [text, setText] = useState('');
  const [filename, setFilename] = useState('');
  const [phase, setPhase] = useState<Phase>({ kind: 'edit' });
  const [fileError, setFileError] = useState('');
  const [tried, setTried] = useState(false);
  const { send: sendRequest, cancel, error } = useAiRequest();
  const length = useMemo(() => documentLength(text), [text]);
  const problem = documentProblem(text, length);
  const over = length > MAX_DOCUMENT;

  // Back from sending, the document takes the focus.
  const textArea = useRef<HTMLTextAreaElement>(null);
  useFocusAfterSending(textArea, phase.kind === 'sending', phase.kind === 'edit');

  async function pickFile(file: File | undefined) {
    setFileError('');
    if (!file) return;
    try {
      setText(await readDocument(file));
      setFilename(file.name);
    } catch (e) {
      setFileError(e instanceof Error ? e.message : String(e));
    }
  }

  async function send() {
    setTried(true);
    if (problem) return; // refused here: nothing is sent, nothing is charged
    setPhase({ kind: 'sending' });
    const notes = await sendRequest(async (signal) => {
      const ans = await aiJson<DocumentNotes>('document-to-notes', documentRequest(text, filename, client.boardId), { signal });
      return (ans.notes ?? []).filter((n) => n && typeof n.title === 'string' && typeof n.content === 'string');
    });
    // On a failure the text stays in the dialog: nothing the user wrote is lost.
    setPhase(notes ? { kind: 'preview', notes, picked: notes.map(() => true) } : { kind: 'edit' });
  }

  function add(notes: ProposedNote[], picked: boolean[]) {
    const chosen = notes.filter((_, i) => picked[i]);
    if (chosen.length === 0) return;
    // Placed when added, against the board as it is now.
    const existing = client.getSnapshot().notes;
    const rows = importedNotes(chosen, existing.values(), () => randomId());
    // One batch: one store write, one push; each note is logged as create_note.
    client.batch(() => rows.forEach((n) => client.upsertNote(n)));
    setPhase({ kind: 'added', count: chosen.length, besides: existing.size > 0 });
  }

  const sending = phase.kind === 'sending';
  return (
    <Dialog title="Import a document" onClose={onClose} wide>
      {phase.kind === 'added' ? (
        <Added
          count={phase.count}
          besides={phase.besides}
          onClose={onClose}
          onAgain={() => {
            setText('');
            setFilename('');
            setTried(false);
            setPhase({ kind: 'edit' });
          }}
        />
      ) : phase.kind === 'preview' ? (
        <Preview
          notes={phase.notes}
          picked={phase.picked}
          onPick={(i, v) => setPhase({ ...phase, picked: phase.picked.map((p, j) => (j === i ? v : p)) })}
          onBack={() => setPhase({ kind: 'edit' })}
          onAdd={() => add(phase.notes, phase.picked)}
        />
      ) : (
        <form
          className="import-form"
          onSubmit={(e) => {
            e.preventDefault();
            void send();
          }}
        >
          <p className="muted">Paste a document or choose a text or Markdown file. The AI proposes up to 15 notes from it; you pick which to add. An import costs 5 AI credits.</p>
          <label htmlFor={id + 'file'}>File (.txt or .md)</label>
          <input id={id + 'file'} type="file" accept={FILE_TYPES.join(',')} disabled={sending} onChange={(e) => void pickFile(e.target.files?.[0])} />
          {fileError && (
            <p className="error" role="alert">
              {fileError}
            </p>
          )}
          <label htmlFor={id + 'text'}>Document text</label>
          <textarea
            id={id + 'text'}
            ref={textArea}
            data-autofocus
            rows={14}
            value={text}
            readOnly={sending}
            aria-describedby={id + 'count'}
            aria-invalid={over || undefined}
            onChange={(e) => setText(e.target.value)}
          />
          <p id={id + 'count'} className={over ? 'import-count over' : 'import-count'} data-count={length}>
            {fmt(length)} / {fmt(MAX_DOCUMENT)} characters{filename ? ` · from ${filename}` : ''}
          </p>
          {(over || (tried && problem)) && (
            <p className="error" role="alert">
              {problem}
            </p>
          )}
          <AiErrorText error={error} />
          {sending ? (
            <div className="row">
              <p role="status" aria-live="polite" className="import-progress">
                <span className="spinner" aria-hidden="true" /> Reading the document and proposing notes… this can take a minute.
              </p>
              <button type="button" onClick={cancel}>
                Cancel
              </button>
            </div>
          ) : (
            <div className="row">
              <button type="submit" className="primary" disabled={over}>
                Propose notes
              </button>
              <button type="button" onClick={onClose}>
                Close
              </button>
            </div>
          )}
        </form>
      )}
    </Dialog>
  );
}

function Preview({ notes, picked, onPick, onBack, onAdd }: { notes: ProposedNote[]; picked: boolean[]; onPick: (i: number, v: boolean) => void; onBack: () => void; onAdd: () => void }) {
  const n = picked.filter(Boolean).length;
  const id = useId();
  const heading = useRef<HTMLHeadingElement>(null);
  // The form the focus was in is gone: the preview's heading takes it.
  useEffect(() => heading.current?.focus(), []);
  return (
    <section aria-labelledby={id}>
      <h3 id={id} ref={heading} tabIndex={-1}>
        {notes.length} proposed note{notes.length === 1 ? '' : 's'}
      </h3>
      {notes.length === 0 ? (
        <p className="muted">The AI proposed no notes. Go back and try again, or shorten the document.</p>
      ) : (
        <ul className="plain import-preview">
          {notes.map((p, i) => {
            const color = noteColor(p.suggestedColor);
            const type = noteType(p.suggestedType);
            return (
              <li key={i}>
                <label className="import-pick">
                  <input type="checkbox" checked={picked[i]} onChange={(e) => onPick(i, e.target.checked)} />
                  <span className="sr-only">Add “{p.title || 'untitled'}”</span>
                </label>
                {/* Drawn as the note will look on the board. */}
                <article className={picked[i] ? 'note import-note' : 'note import-note unpicked'} style={{ background: background(color) }} aria-label={`${type}: ${p.title || 'untitled'}`}>
                  <header className="note-head">
                    <span className="note-type">{type}</span>
                    <span className="note-color">{color}</span>
                  </header>
                  <h4 className="note-title">{p.title || 'Untitled'}</h4>
                  <div className="note-body md" dangerouslySetInnerHTML={{ __html: renderMarkdown(excerpt(p.content)) }} />
                </article>
              </li>
            );
          })}
        </ul>
      )}
      <div className="row">
        <button type="button" className="primary" disabled={n === 0} onClick={onAdd}>
          Add {n} note{n === 1 ? '' : 's'}
        </button>
        <button type="button" onClick={onBack}>
          Back to the document
        </button>
      </div>
    </section>
  );
}

/** Added says what was added and where: the grid may be outside the view. */
function Added({ count, besides, onClose, onAgain }: { count: number; besides: boolean; onClose: () => void; onAgain: () => void }) {
  const close = useRef<HTMLButtonElement>(null);
  useEffect(() => close.current?.focus(), []);
  return (
    <section>
      <p role="status">
        Added {count} note{count === 1 ? '' : 's'} from the document{besides ? ", to the right of the board's other notes" : ''}. <em>Zoom to fit</em> (or the 0 key) shows the whole board.
      </p>
      <div className="row">
        <button type="button" className="primary" ref={close} onClick={onClose}>
          Close
        </button>
        <button type="button" onClick={onAgain}>
          Import another document
        </button>
      </div>
    </section>
  );
}
