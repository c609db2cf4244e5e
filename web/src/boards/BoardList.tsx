import { useCallback, useEffect, useId, useState, type FormEvent } from 'react';
import { useServices } from '../app/services';
import { Header } from '../app/Header';
import { boardPath, navigate } from '../app/router';
import type { ApiError } from '../api/api';
import type { BoardSummary } from '../api/types';
import { boardIdFromInput, randomId } from './ids';

const BOARDS_KEY = 'boards';

/** renameBoard names a board with an empty push carrying only `board`. */
export async function renameBoard(api: ReturnType<typeof useServices>['api'], id: string, name: string) {
  await api.push(
    id,
    { clientVersion: 0, board: { name, updatedAt: new Date().toISOString() }, notes: { upserted: [], deleted: [] }, trackerItems: { upserted: [], deleted: [] } },
    crypto.randomUUID(),
  );
}

export function BoardList({ email, onLogout, onSessionLost }: { email: string; onLogout: () => void; onSessionLost: () => void }) {
  const { api, store } = useServices();
  const [boards, setBoards] = useState<BoardSummary[] | null>(null);
  const [offline, setOffline] = useState(false);
  const [error, setError] = useState('');
  const [name, setName] = useState('');
  const [openId, setOpenId] = useState('');
  const [renaming, setRenaming] = useState<string | null>(null);
  const [newName, setNewName] = useState('');
  const [busy, setBusy] = useState(false);
  const ids = { name: useId(), open: useId(), rename: useId() };

  const load = useCallback(async () => {
    try {
      const { boards } = await api.listBoards();
      setBoards(boards);
      setOffline(false);
      await store.setValue(BOARDS_KEY, boards);
    } catch (e) {
      const x = e as ApiError;
      if (x.status === 401) return onSessionLost();
      setOffline(x.status === 0);
      setBoards((await store.getValue<BoardSummary[]>(BOARDS_KEY)) ?? []);
      if (x.status !== 0) setError(x.message);
    }
  }, [api, store, onSessionLost]);

  useEffect(() => {
    document.title = 'Your boards · Corkboard';
    void load();
  }, [load]);

  async function create(e: FormEvent) {
    e.preventDefault();
    setError('');
    setBusy(true);
    const id = randomId();
    try {
      await api.claim(id);
      if (name.trim()) await renameBoard(api, id, name.trim());
      navigate(boardPath(id));
    } catch (err) {
      setError(`The board could not be created: ${(err as ApiError).message}`);
    } finally {
      setBusy(false);
    }
  }

  async function rename(e: FormEvent, id: string) {
    e.preventDefault();
    try {
      await renameBoard(api, id, newName.trim());
      setRenaming(null);
      await load();
    } catch (err) {
      setError(`The board could not be renamed: ${(err as ApiError).message}`);
    }
  }

  function open(e: FormEvent) {
    e.preventDefault();
    const id = boardIdFromInput(openId);
    if (!id) {
      setError('A board ID is 1 to 64 letters, digits, _ or -.');
      return;
    }
    navigate(boardPath(id));
  }

  return (
    <>
      <Header email={email} onLogout={onLogout}>
        <h1 className="screen-title">Your boards</h1>
      </Header>
      <main className="page">
        {offline && (
          <p className="banner" role="status">
            You are offline. Boards you opened on this device before still open.
          </p>
        )}
        <p className="error" role="alert">
          {error}
        </p>
        <section aria-labelledby="new-board" className="card">
          <h2 id="new-board">New board</h2>
          <form onSubmit={create} className="row">
            <label htmlFor={ids.name}>Name</label>
            <input id={ids.name} value={name} maxLength={200} onChange={(e) => setName(e.target.value)} placeholder="e.g. Q3 roadmap" />
            <button type="submit" className="primary" disabled={busy || offline}>
              Create board
            </button>
          </form>
          <form onSubmit={open} className="row">
            <label htmlFor={ids.open}>Board ID or link</label>
            <input id={ids.open} value={openId} onChange={(e) => setOpenId(e.target.value)} />
            <button type="submit">Open</button>
          </form>
        </section>
        <section aria-labelledby="list-title">
          <h2 id="list-title">Boards you own or were invited to</h2>
          {boards === null ? (
            <p aria-busy="true">Loading…</p>
          ) : boards.length === 0 ? (
            <p>No boards yet. Create one above.</p>
          ) : (
            <ul className="board-list">
              {boards.map((b) => (
                <li key={b.id}>
                  {renaming === b.id ? (
                    <form onSubmit={(e) => rename(e, b.id)} className="row">
                      <label htmlFor={ids.rename}>New name for {b.name || b.id}</label>
                      <input id={ids.rename} value={newName} maxLength={200} onChange={(e) => setNewName(e.target.value)} autoFocus />
                      <button type="submit" className="primary">
                        Save
                      </button>
                      <button type="button" onClick={() => setRenaming(null)}>
                        Cancel
                      </button>
                    </form>
                  ) : (
                    <>
                      <a
                        href={boardPath(b.id)}
                        onClick={(e) => {
                          e.preventDefault();
                          navigate(boardPath(b.id));
                        }}
                      >
                        {b.name || 'Untitled board'}
                      </a>
                      <span className="muted">
                        {b.ownerEmail === email ? 'Owned by you' : `Owner: ${b.ownerEmail}`} · ID {b.id}
                      </span>
                      {b.ownerEmail === email && (
                        <button
                          type="button"
                          onClick={() => {
                            setRenaming(b.id);
                            setNewName(b.name);
                          }}
                          aria-label={`Rename ${b.name || b.id}`}
                        >
                          Rename
                        </button>
                      )}
                    </>
                  )}
                </li>
              ))}
            </ul>
          )}
        </section>
      </main>
    </>
  );
}
