import { useState, type FormEvent } from 'react';
import { useServices } from '../app/services';
import type { ApiError } from '../api/api';
import type { Access, Phase, Phases } from '../api/types';
import { randomId } from '../boards/ids';
import { Dialog } from '../app/Dialog';

const phaseName = (p: Phase) => (typeof p.name === 'string' && p.name) || p.id;

/**
 * PhasesBar shows the board's phases and the current one (the owner picks
 * it there); the board menu's "Edit phases" opens the editor (editing).
 */
export function PhasesBar({ boardId, access, onAccessChange, editing, onEditingDone }: { boardId: string; access: Access; onAccessChange: (a: Access) => void; editing: boolean; onEditingDone: () => void }) {
  const { api } = useServices();
  const [error, setError] = useState('');
  const phases = access.phases;

  async function save(next: Phases) {
    setError('');
    try {
      const r = await api.setPhases(boardId, next);
      onAccessChange({ ...access, phases: r.phases });
      return true;
    } catch (e) {
      setError((e as ApiError).message);
      return false;
    }
  }

  const editor = editing && <PhasesEditor phases={phases ?? { phases: [], currentPhaseId: '' }} onSave={async (p) => (await save(p)) && onEditingDone()} onClose={onEditingDone} />;
  // No phases: nothing on the canvas (the owner adds them from the board menu).
  if (!phases?.phases.length) return editor || null;
  return (
    <nav className="phases" aria-label="Phases">
      {phases.phases.length ? (
        <ol>
          {phases.phases.map((p) => {
            const current = p.id === phases.currentPhaseId;
            return (
              <li key={p.id}>
                {access.isOwner ? (
                  <button type="button" aria-current={current ? 'step' : undefined} className={current ? 'phase current' : 'phase'} onClick={() => save({ ...phases, currentPhaseId: p.id })} title="Make this the current phase">
                    {phaseName(p)}
                  </button>
                ) : (
                  <span aria-current={current ? 'step' : undefined} className={current ? 'phase current' : 'phase'}>
                    {phaseName(p)}
                  </span>
                )}
              </li>
            );
          })}
        </ol>
      ) : (
        <span className="muted">No phases yet.</span>
      )}
      <span className="error" role="alert">
        {error}
      </span>
      {editor}
    </nav>
  );
}

function PhasesEditor({ phases, onSave, onClose }: { phases: Phases; onSave: (p: Phases) => void; onClose: () => void }) {
  const [list, setList] = useState<Phase[]>(phases.phases);
  const [current, setCurrent] = useState(phases.currentPhaseId);
  function submit(e: FormEvent) {
    e.preventDefault();
    onSave({ phases: list, currentPhaseId: list.some((p) => p.id === current) ? current : '' });
  }
  return (
    <Dialog title="Edit phases" onClose={onClose}>
      <form onSubmit={submit}>
        <ol className="plain">
          {list.map((p, i) => (
            <li key={p.id} className="row">
              <label htmlFor={`phase-${p.id}`}>Phase {i + 1}</label>
              <input id={`phase-${p.id}`} value={phaseName(p) === p.id && !p.name ? '' : String(p.name ?? '')} onChange={(e) => setList(list.map((x) => (x.id === p.id ? { ...x, name: e.target.value } : x)))} />
              <label>
                <input type="radio" name="current" checked={current === p.id} onChange={() => setCurrent(p.id)} /> Current
              </label>
              <button type="button" onClick={() => setList(list.filter((x) => x.id !== p.id))} aria-label={`Remove phase ${i + 1}`}>
                Remove
              </button>
            </li>
          ))}
        </ol>
        <div className="row">
          <button type="button" onClick={() => setList([...list, { id: randomId(8), name: `Phase ${list.length + 1}` }])}>
            Add a phase
          </button>
          <button type="submit" className="primary">
            Save phases
          </button>
        </div>
      </form>
    </Dialog>
  );
}
