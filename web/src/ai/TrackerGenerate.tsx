// "Generate" in the tracker (issue 12): tracker/generate in its three modes,
// a preview of the proposed items, then the picked ones pushed as tracker
// edits. Loaded lazily by TrackerPanel.
import { useEffect, useId, useRef, useState } from 'react';
import { Dialog } from '../app/Dialog';
import { aiJson } from '../api/ai';
import type { TrackerItem } from '../api/types';
import type { SyncClient } from '../sync/client';
import { randomId } from '../boards/ids';
import { AiErrorText } from './AiErrorText';
import { plural } from './errors';
import { MAX_GENERATED, STEPS, actionLabel, STEP_LABELS, acceptedItems, formProblem, generateRequest, plan, type GenerateForm, type GenerateMode, type Planned, type Step, type TrackerGeneration } from './trackerGen';
import { useAiRequest, useFocusAfterSending } from './useAiRequest';
import './importgen.css';

interface Props {
  client: SyncClient;
  items: ReadonlyMap<string, TrackerItem>;
  onClose: () => void;
  /** initial: the form's starting values (e.g. children of an open item). */
  initial?: Partial<GenerateForm>;
}

type Phase = { kind: 'form' } | { kind: 'sending'; started: number } | { kind: 'preview'; gen: TrackerGeneration; planned: Planned[]; picked: boolean[] } | { kind: 'added'; message: string; next: string };

const MODES: { mode: GenerateMode; label: string; hint: string }[] = [
  { mode: 'generate_step', label: 'The next step', hint: 'New epics, stories or tasks for the board' },
  { mode: 'generate_children', label: 'Children of an item', hint: 'Break one item down one level' },
  { mode: 'regenerate_items', label: 'Better versions of items', hint: 'Rewrite the chosen items in place' },
];

const label = (i: TrackerItem) => `${i.key} ${i.summary || '(no summary)'}`;
/** TrackerGenerate asks the AI for work items and adds the ones the user picks. */
export default function TrackerGenerate({ client, items, onClose, initial }: Props) {
  const id = useId();
  const sorted = [...items.values()].sort((a, b) => (a.key ?? '').localeCompare(b.key ?? '', undefined, { numeric: true }));
  const [form, setForm] = useState<GenerateForm>({ mode: 'generate_step', step: 'story', parentId: sorted[0]?.id ?? '', itemIds: [], instruction: '', context: '', count: 0, ...initial });
  const [phase, setPhase] = useState<Phase>({ kind: 'form' });
  const [tried, setTried] = useState(false);
  const { send, cancel, error } = useAiRequest();
  // Back from sending, the submit button takes the focus.
  const submit = useRef<HTMLButtonElement>(null);
  useFocusAfterSending(submit, phase.kind === 'sending', phase.kind === 'form');
  const problem = formProblem(form, items);
  const set = (p: Partial<GenerateForm>) => setForm((f) => ({ ...f, ...p }));

  async function generate() {
    setTried(true);
    if (problem) return;
    setPhase({ kind: 'sending', started: Date.now() });
    const g = await send(async (signal) => {
      const gen = await aiJson<TrackerGeneration>('tracker/generate', generateRequest(client.boardId, form, items, client.getSnapshot().notes), { signal });
      return { items: gen.items ?? [], recommendedNextStep: gen.recommendedNextStep ?? { step: 'done', reason: '' } } satisfies TrackerGeneration;
    });
    if (!g) {
      setPhase({ kind: 'form' }); // the form keeps what the user wrote
      return;
    }
    const planned = plan(g, items);
    setPhase({ kind: 'preview', gen: g, planned, picked: planned.map(() => true) });
  }

  function add(p: Extract<Phase, { kind: 'preview' }>) {
    const chosen = p.planned.filter((_, i) => p.picked[i]);
    if (chosen.length === 0) return;
    // Against the tracker as it is now (keys may have been taken meanwhile).
    const now = client.getSnapshot().items;
    const rows = acceptedItems(chosen, now, () => randomId());
    client.batch(() => rows.forEach((r) => client.upsertItem(r)));
    const replaced = rows.filter((r) => now.has(r.id)).length;
    const added = chosen.length - replaced;
    const parts = [added && `added ${plural(added, 'item')}`, replaced && `replaced ${plural(replaced, 'item')}`].filter(Boolean).join(' and ');
    setPhase({ kind: 'added', message: parts.charAt(0).toUpperCase() + parts.slice(1) + ': ' + rows.map((r) => r.key).join(', ') + '.', next: p.gen.recommendedNextStep.step });
  }

  return (
    <Dialog title="Generate work items" onClose={onClose} wide>
      {phase.kind === 'preview' ? (
        <Preview items={items} phase={phase} onPick={(i, v) => setPhase({ ...phase, picked: phase.picked.map((x, j) => (j === i ? v : x)) })} onAdd={() => add(phase)} onBack={() => setPhase({ kind: 'form' })} />
      ) : phase.kind === 'added' ? (
        <section>
          <p role="status">{phase.message}</p>
          <div className="row">
            {(STEPS as readonly string[]).includes(phase.next) && (
              <button
                type="button"
                className="primary"
                onClick={() => {
                  set({ mode: 'generate_step', step: phase.next as Step });
                  setPhase({ kind: 'form' });
                }}
              >
                Next: {STEP_LABELS[phase.next].toLowerCase()}
              </button>
            )}
            <button type="button" onClick={onClose}>
              Close
            </button>
          </div>
        </section>
      ) : (
        <form
          className="gen-form"
          onSubmit={(e) => {
            e.preventDefault();
            void generate();
          }}
        >
          <fieldset disabled={phase.kind === 'sending'}>
            <legend>What to generate</legend>
            {MODES.map((m) => (
              <label key={m.mode}>
                <input type="radio" name={id + 'mode'} checked={form.mode === m.mode} onChange={() => set({ mode: m.mode })} disabled={m.mode !== 'generate_step' && items.size === 0} />
                {m.label} <span className="muted">— {m.hint}</span>
              </label>
            ))}
          </fieldset>
          <fieldset disabled={phase.kind === 'sending'}>
            <legend>{form.mode === 'generate_step' ? 'Type of items' : form.mode === 'generate_children' ? 'Item to break down' : `Items to rewrite (at most ${MAX_GENERATED})`}</legend>
            {form.mode === 'generate_step' && (
              <select aria-label="Type of items" value={form.step} onChange={(e) => set({ step: e.target.value as Step })}>
                {STEPS.map((s) => (
                  <option key={s} value={s}>
                    {s === 'story' ? 'stories' : s + 's'}
                  </option>
                ))}
              </select>
            )}
            {form.mode === 'generate_children' && (
              <select aria-label="Item to break down" value={form.parentId} onChange={(e) => set({ parentId: e.target.value })}>
                {sorted.map((i) => (
                  <option key={i.id} value={i.id}>
                    {label(i)} ({i.type})
                  </option>
                ))}
              </select>
            )}
            {form.mode === 'regenerate_items' && (
              <ul className="plain gen-pick-list">
                {sorted.map((i) => (
                  <li key={i.id}>
                    <label>
                      <input
                        type="checkbox"
                        checked={form.itemIds.includes(i.id)}
                        onChange={(e) => set({ itemIds: e.target.checked ? [...form.itemIds, i.id] : form.itemIds.filter((x) => x !== i.id) })}
                      />
                      {label(i)}
                    </label>
                  </li>
                ))}
              </ul>
            )}
          </fieldset>
          <label htmlFor={id + 'ins'}>Instruction (optional)</label>
          <textarea id={id + 'ins'} rows={2} value={form.instruction} readOnly={phase.kind === 'sending'} onChange={(e) => set({ instruction: e.target.value })} placeholder="e.g. focus on the sign-up flow" />
          <label htmlFor={id + 'ctx'}>Product context (optional)</label>
          <textarea id={id + 'ctx'} rows={2} value={form.context} readOnly={phase.kind === 'sending'} onChange={(e) => set({ context: e.target.value })} />
          <label htmlFor={id + 'n'}>How many (0 lets the AI choose, at most {MAX_GENERATED})</label>
          <input id={id + 'n'} type="number" min={0} max={MAX_GENERATED} value={form.count} readOnly={phase.kind === 'sending'} onChange={(e) => set({ count: Math.max(0, Math.min(MAX_GENERATED, Math.floor(Number(e.target.value) || 0))) })} />
          {tried && problem && (
            <p className="error" role="alert">
              {problem}
            </p>
          )}
          <AiErrorText error={error} />
          {phase.kind === 'sending' ? (
            <div className="row">
              <Progress started={phase.started} />
              <button type="button" onClick={cancel}>
                Cancel
              </button>
            </div>
          ) : (
            <div className="row">
              <button type="submit" className="primary" ref={submit}>
                Generate
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

/** Progress says the AI is at work and for how long (an answer may take up to a minute). */
function Progress({ started }: { started: number }) {
  const [now, setNow] = useState(started);
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, []);
  const s = Math.max(0, Math.floor((now - started) / 1000));
  return (
    <p className="import-progress">
      <span className="spinner" aria-hidden="true" />
      <span role="status">Generating work items… this can take up to a minute.</span>
      <span aria-hidden="true">{s} s</span>
    </p>
  );
}

function Preview({ items, phase, onPick, onAdd, onBack }: { items: ReadonlyMap<string, TrackerItem>; phase: Extract<Phase, { kind: 'preview' }>; onPick: (i: number, v: boolean) => void; onAdd: () => void; onBack: () => void }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);
  const id = useId();
  const { planned, picked, gen } = phase;
  const replaced = planned.filter((p, i) => picked[i] && p.replaces).length;
  const added = picked.filter(Boolean).length - replaced;
  const next = gen.recommendedNextStep;
  return (
    <section aria-labelledby={id}>
      <h3 id={id} ref={heading} tabIndex={-1}>
        {plural(planned.length, 'proposed item')}
      </h3>
      {planned.length === 0 ? (
        <p className="muted">The AI proposed no items. Go back and try again, perhaps with an instruction.</p>
      ) : (
        <ul className="plain gen-preview">
          {planned.map((p, i) => {
            const parent = p.proposal.parentId ? items.get(p.proposal.parentId) : undefined;
            return (
              <li key={i}>
                <input type="checkbox" id={`${id}-${i}`} checked={picked[i]} onChange={(e) => onPick(i, e.target.checked)} />
                <label htmlFor={`${id}-${i}`}>
                  <span className="badge">{p.replaces?.type ?? p.proposal.type}</span> <strong>{p.proposal.summary || '(no summary)'}</strong>
                  {!p.replaces && parent && <span className="muted"> · under {parent.key}</span>}
                  {p.replaces && (
                    <span className="gen-replaces">
                      {' '}
                      · replaces {p.replaces.key}: <del>{p.replaces.summary}</del>
                    </span>
                  )}
                  {p.proposal.description && <span className="gen-desc">{p.proposal.description}</span>}
                </label>
              </li>
            );
          })}
        </ul>
      )}
      {next.step && (
        <p className="gen-next">
          <strong>Recommended next: {STEP_LABELS[next.step] ?? next.step}.</strong> {next.reason}
        </p>
      )}
      <div className="row">
        <button type="button" className="primary" disabled={added + replaced === 0} onClick={onAdd}>
          {actionLabel(added, replaced)}
        </button>
        <button type="button" onClick={onBack}>
          Back
        </button>
      </div>
    </section>
  );
}
