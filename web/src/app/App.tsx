import { useCallback, useEffect, useState } from 'react';
import { useServices } from './services';
import { boardIdOf, usePath } from './router';
import { Login } from '../auth/Login';
import { BoardList } from '../boards/BoardList';
import { BoardGate } from '../boards/BoardGate';

/** Session is who is logged in, as far as the client knows. */
export type Session = { state: 'loading' } | { state: 'out' } | { state: 'in'; email: string; offline: boolean };

const ME_KEY = 'me';

export function App() {
  const { api, store } = useServices();
  const [session, setSession] = useState<Session>({ state: 'loading' });
  const path = usePath();

  const check = useCallback(async () => {
    try {
      const me = await api.me();
      await store.setValue(ME_KEY, me.email);
      setSession({ state: 'in', email: me.email, offline: false });
    } catch (e) {
      const status = (e as { status?: number }).status;
      const cached = status === 0 ? await store.getValue<string>(ME_KEY) : undefined;
      // Offline with a session seen before: open what this device has.
      setSession(cached ? { state: 'in', email: cached, offline: true } : { state: 'out' });
    }
  }, [api, store]);

  useEffect(() => {
    void check();
  }, [check]);

  const logout = useCallback(async () => {
    try {
      await api.logout();
    } catch {
      /* the session may already be gone */
    }
    await store.setValue(ME_KEY, undefined);
    setSession({ state: 'out' });
  }, [api, store]);

  const sessionLost = useCallback(() => setSession({ state: 'out' }), []);

  if (session.state === 'loading') {
    return (
      <main className="centered" aria-busy="true">
        <p>Loading…</p>
      </main>
    );
  }
  if (session.state === 'out') return <Login onLoggedIn={check} />;
  const boardId = boardIdOf(path);
  if (boardId) return <BoardGate key={boardId} boardId={boardId} email={session.email} onLogout={logout} onSessionLost={sessionLost} />;
  return <BoardList email={session.email} onLogout={logout} onSessionLost={sessionLost} />;
}
