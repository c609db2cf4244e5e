// The board's snapshots (docs/changelog.md): list, take one, download the
// board or a snapshot as Markdown, view a past board read-only, and restore
// it as normal pushes after a confirmation that says what will change.
import { useCallback, useEffect, useRef, useState } from 'react';
import { useServices } from '../app/services';
import { DockPanel } from '../layout/Dock';
import { snapshotDownloadUrl } from '../api/api';
import type { BoardState, Note, SnapshotInfo, TrackerItem } from '../api/types';
import { renderMarkdown } from '../canvas/notes';
import { describePlan, planRestore, type RestorePlan } from './restore';

interface Props {
  boardId: string;
  now: { notes: ReadonlyMap<string, Note>; items: ReadonlyMap<string, TrackerItem>; name: string };
  canEdit: boolean;
  onApply: (p: RestorePlan) => void;
  onClose: () => void;
}

const when = (ts: string) => new Date(ts).toLocaleString();

export default function SnapshotsPanel({ boardId, now, canEdit, onApply, onClose }: Props) {
  const { api } = useServices();
  const [list, setList] = useState<SnapshotInfo[] | null>(null);
  const [error, setError] = useState('');
  const [status, setStatus] = useState('');
  const [busy, setBusy] = useState(false);
  const [viewing, setViewing] = useState<{ snap: SnapshotInfo; state: BoardState } | null>(null);
  const [confirm, setConfirm] = useState<{ snap: SnapshotInfo; plan: RestorePlan } | null>(null);
  // The confirmation takes the focus, so a keyboard user reads what will change and answers.
  const confirmRef = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (confirm) confirmRef.current?.focus();
  }, [confirm]);

  const load = useCallback(async () => {
    try {
      setList((await api.listSnapshots(boardId)).snapshots);
    } catch (e) {
      setError((e as Error).message);
    }
  }, [api, boardId]);
  useEffect(() => {
    void load();
  }, [load]);

  async function take() {
    setBusy(true);
    setError('');
    try {
      await api.createSnapshot(boardId);
      await load();
      setStatus('Snapshot taken.');
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  }

  async function open(snap: SnapshotInfo, then: 'view' | 'restore') {
    setError('');
    try {
      const state = await api.restoreBoard(boardId, snap.key);
      if (then === 'view') setViewing({ snap, state });
      else setConfirm({ snap, plan: planRestore(now, state) });
    } catch (e) {
      setError((e as Error).message);
    }
  }

  return (
    <DockPanel title="Snapshots" onClose={onClose} wide>
      <div className="history">
        <div className="row">
          {canEdit && (
            <button type="button" className="primary" disabled={busy} onClick={() => void take()}>
              Take a snapshot
            </button>
          )}
          <a href={snapshotDownloadUrl(boardId)} download>
            Download the board (Markdown)
          </a>
        </div>
        {error && (
          <p className="error" role="alert">
            {error}
          </p>
        )}
        <p className="sr-only" role="status" aria-live="polite">
          {status}
        </p>
        {list && list.length === 0 && <p className="muted">No snapshots yet.</p>}
        <ol className="plain history-list" aria-label="Snapshots, newest first">
          {(list ?? []).map((s) => (
            <li key={s.key}>
              <time dateTime={s.timestamp}>{when(s.timestamp)}</time>{' '}
              <button type="button" onClick={() => void open(s, 'view')} aria-label={`View the board of ${when(s.timestamp)}`}>
                View
              </button>{' '}
              {canEdit && (
                <button type="button" onClick={() => void open(s, 'restore')} aria-label={`Restore the board of ${when(s.timestamp)}`}>
                  Restore
                </button>
              )}{' '}
              <a href={snapshotDownloadUrl(boardId, s.key)} download aria-label={`Download the snapshot of ${when(s.timestamp)}`}>
                Download
              </a>
            </li>
          ))}
        </ol>
        {confirm && (
          <section className="history-version" role="alertdialog" aria-label="Restore this snapshot?">
            <h3>Restore the board of {when(confirm.snap.timestamp)}?</h3>
            <p data-testid="restore-summary">{describePlan(confirm.plan)}</p>
            <div className="row">
              <button
                type="button"
                className="primary"
                ref={confirmRef}
                onClick={() => {
                  onApply(confirm.plan);
                  setConfirm(null);
                  setStatus('The board was restored.');
                }}
              >
                Restore
              </button>
              <button type="button" onClick={() => setConfirm(null)}>
                Cancel
              </button>
            </div>
          </section>
        )}
        {viewing && <PastBoard snap={viewing.snap} state={viewing.state} />}
      </div>
    </DockPanel>
  );
}

/** PastBoard shows a past board read-only: its notes and work items. */
function PastBoard({ snap, state }: { snap: SnapshotInfo; state: BoardState }) {
  return (
    <section className="history-version" aria-label={`The board of ${when(snap.timestamp)}`}>
      <h3>
        {state.board.name} — {when(snap.timestamp)} (read-only)
      </h3>
      {state.notes.length === 0 && <p className="muted">No notes.</p>}
      <ul className="plain past-notes">
        {state.notes.map((n) => (
          <li key={n.id}>
            <h4>{n.title || 'Untitled'}</h4>
            <div className="md" dangerouslySetInnerHTML={{ __html: renderMarkdown(n.content) }} />
          </li>
        ))}
      </ul>
      {state.trackerItems.length > 0 && (
        <ul className="plain">
          {state.trackerItems.map((i) => (
            <li key={i.id}>
              {i.key}: {i.summary} ({i.status || 'no status'})
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
