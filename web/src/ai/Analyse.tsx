// Analyse and rewrite a note or a work item: the suggestions are anchored
// (highlighted) in the text they are about and taken one by one; a rewrite
// is shown as a diff and applied only when the user says so, through the
// caller's normal save. Loaded lazily by NoteEditor and TrackerPanel.
import { useEffect, useId, useRef, useState } from 'react';
import { diffWordsWithSpace } from 'diff';
import { Dialog } from '../app/Dialog';
import { AiErrorText } from './AiErrorText';
import { anchor, analyse, rewrite, segments, fieldsOf, valueOf, withField, type Anchor, type Field, type Proposal, type Suggestion, type Target } from './analyse';

interface Props {
  target: Target;
  /** onApply saves one changed field through the caller's normal save path. */
  onApply: (field: Field, value: string) => void;
  onClose: () => void;
}

type Card = Suggestion & {
  state: 'open' | 'working' | 'proposed' | 'applied' | 'dismissed';
  proposal?: Proposal;
  error?: unknown;
  /** note: a line about what happened to this suggestion. */
  note?: string;
};

const fieldName: Record<Field, string> = { content: 'Content', summary: 'Summary', description: 'Description' };

/** Analyse shows the AI's suggestions for a note or work item and applies the rewrites the user accepts. */
export default function Analyse({ target: initial, onApply, onClose }: Props) {
  const [target, setTarget] = useState(initial);
  const [cards, setCards] = useState<Card[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [status, setStatus] = useState('Analysing…');
  const abort = useRef<AbortController | null>(null);
  const ids = useId();

  async function run() {
    abort.current?.abort();
    const ac = new AbortController();
    abort.current = ac;
    setError(null);
    setCards(null);
    setStatus('Analysing…');
    try {
      const s = await analyse(target, ac.signal);
      if (ac.signal.aborted) return;
      setCards(s.map((x) => ({ ...x, state: 'open' })));
      setStatus(s.length ? `${s.length} suggestion${s.length === 1 ? '' : 's'}.` : 'Nothing to improve: the AI has no suggestions.');
    } catch (e) {
      if (ac.signal.aborted) return;
      setError(e);
      setStatus('');
    }
  }

  // The analysis starts when the dialog opens, once; closing it abandons the requests.
  useEffect(() => {
    void run();
    return () => abort.current?.abort();
  }, []);

  const anchors: (Anchor | null)[] = (cards ?? []).map((c) => (c.state === 'dismissed' || c.state === 'applied' ? null : anchor(target, c.sectionText)));
  const update = (i: number, patch: Partial<Card>) => setCards((cs) => cs && cs.map((c, j) => (j === i ? { ...c, ...patch } : c)));

  async function ask(i: number, instruction: string) {
    const a = anchors[i];
    update(i, { state: 'working', error: undefined, note: undefined, proposal: undefined });
    setStatus(`Rewriting for suggestion ${i + 1}…`);
    try {
      const p = await rewrite(target, a, instruction, abort.current?.signal);
      update(i, { state: 'proposed', proposal: p });
      setStatus(`Suggestion ${i + 1}: the rewrite is ready. Check the changes, then apply or discard them.`);
    } catch (e) {
      update(i, { state: 'open', error: e });
      setStatus('');
    }
  }

  function apply(i: number) {
    const p = cards?.[i]?.proposal;
    if (!p) return;
    if (valueOf(target, p.field) !== p.before) {
      update(i, { state: 'open', proposal: undefined, note: 'The text changed since this rewrite was made: ask for it again.' });
      return;
    }
    onApply(p.field, p.after);
    setTarget(withField(target, p.field, p.after));
    // Other rewrites waiting were made from the old text: they would undo this one.
    setCards((cs) =>
      cs &&
      cs.map((c, j) =>
        j === i ? { ...c, state: 'applied', proposal: undefined } : c.state === 'proposed' && c.proposal?.field === p.field ? { ...c, state: 'open', proposal: undefined, note: 'The text changed: ask for this rewrite again.' } : c,
      ),
    );
    setStatus(`Suggestion ${i + 1} applied and saved.`);
  }

  const title = target.kind === 'note' ? `Analyse "${target.title || 'Untitled'}"` : `Analyse ${target.item.key || 'work item'}`;
  return (
    <Dialog title={title} onClose={onClose} wide>
      <div className="analyse">
        <p className="ai-status" role="status" aria-live="polite">
          {status}
        </p>
        {error ? (
          <>
            <AiErrorText error={error} />
            <button type="button" onClick={() => void run()}>
              Try again
            </button>
          </>
        ) : null}
        <section className="analysed" aria-label="The text analysed, with the suggestions' passages marked">
          {fieldsOf(target).map((f) => (
            <div key={f.field}>
              {target.kind === 'item' && <h3>{fieldName[f.field]}</h3>}
              <div className="analysed-text">
                {f.text ? (
                  segments(f.text, anchors, f.field).map((s, k) =>
                    s.suggestion === undefined ? (
                      <span key={k}>{s.text}</span>
                    ) : (
                      <mark key={k} id={`${ids}-mark-${s.suggestion}`} data-suggestion={s.suggestion + 1}>
                        <span className="sr-only">[Suggestion {s.suggestion + 1}:] </span>
                        {s.text}
                        <sup aria-hidden="true">{s.suggestion + 1}</sup>
                      </mark>
                    ),
                  )
                ) : (
                  <em className="muted">(empty)</em>
                )}
              </div>
            </div>
          ))}
        </section>
        {cards && cards.length > 0 && (
          <ol className="plain suggestions" aria-label="Suggestions">
            {cards.map((c, i) => (
              <SuggestionCard key={i} n={i + 1} card={c} anchored={!!anchors[i]} onAsk={(ins) => void ask(i, ins)} onApply={() => apply(i)} onDiscard={() => update(i, { state: 'open', proposal: undefined })} onDismiss={() => update(i, { state: 'dismissed', proposal: undefined })} />
            ))}
          </ol>
        )}
        <div className="row">
          <button type="button" onClick={onClose}>
            Close
          </button>
        </div>
      </div>
    </Dialog>
  );
}

function SuggestionCard({ n, card: c, anchored, onAsk, onApply, onDiscard, onDismiss }: { n: number; card: Card; anchored: boolean; onAsk: (instruction: string) => void; onApply: () => void; onDiscard: () => void; onDismiss: () => void }) {
  const label = `Suggestion ${n}`;
  const done = c.state === 'applied' || c.state === 'dismissed';
  return (
    <li className={`card suggestion ${c.state}`} aria-label={label}>
      <h3>
        {label}
        {c.state === 'applied' ? ' — applied' : c.state === 'dismissed' ? ' — rejected' : ''}
      </h3>
      {!done &&
        (c.sectionText ? (
          anchored ? (
            <blockquote className="anchored">“{c.sectionText}” <span className="muted">(marked {n} in the text)</span></blockquote>
          ) : (
            <p className="unanchored">
              <span className="muted">Not found in the text as it is now, so not marked:</span> “{c.sectionText}”
            </p>
          )
        ) : (
          <p className="muted">About the whole text.</p>
        ))}
      <p>{c.advice}</p>
      {c.note && <p className="muted">{c.note}</p>}
      {c.error ? <AiErrorText error={c.error} /> : null}
      {c.state === 'open' && (
        <div className="row">
          {c.actions.map((a, k) => (
            <button key={k} type="button" className="primary" onClick={() => onAsk(a.instruction)} title={a.instruction}>
              {a.label || 'Rewrite'}
            </button>
          ))}
          {c.actions.length === 0 && c.advice && (
            <button type="button" className="primary" onClick={() => onAsk(c.advice)}>
              Rewrite with this advice
            </button>
          )}
          <button type="button" onClick={onDismiss} aria-label={`Reject suggestion ${n}`}>
            Reject
          </button>
        </div>
      )}
      {c.state === 'working' && <p className="muted">Rewriting…</p>}
      {c.state === 'proposed' && c.proposal && (
        <div className="proposal">
          <h4>Proposed change to the {fieldName[c.proposal.field].toLowerCase()}</h4>
          <Diff before={c.proposal.before} after={c.proposal.after} />
          <div className="row">
            <button type="button" className="primary" onClick={onApply}>
              Apply the rewrite
            </button>
            <button type="button" onClick={onDiscard}>
              Discard the rewrite
            </button>
          </div>
        </div>
      )}
    </li>
  );
}

/** Diff shows a word diff: removed words struck through, added ones underlined. */
function Diff({ before, after }: { before: string; after: string }) {
  if (before === after) return <p className="muted">The rewrite changes nothing.</p>;
  return (
    <figure className="ai-diff-figure">
      <figcaption className="sr-only">Changes: removed text is marked as deleted, added text as inserted.</figcaption>
      <pre className="diff ai-diff">
      {diffWordsWithSpace(before, after).map((p, i) =>
        p.added ? (
          <ins key={i}>{p.value}</ins>
        ) : p.removed ? (
          <del key={i}>{p.value}</del>
        ) : (
          <span key={i}>{p.value}</span>
        ),
      )}
      </pre>
    </figure>
  );
}
