import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { createServices, guestServices, ServicesContext, type Services, type Unsent } from './services';
import { OFFLINE_LOGOUT, unsentText } from '../auth/localData';
import { boardIdOf, usePath } from './router';
import { linkTokenOf } from '../boards/links';
import { LinkPage } from '../boards/LinkPage';
import { Dialog } from './Dialog';
import { Login } from '../auth/Login';
import { BoardList } from '../boards/BoardList';
import { BoardGate } from '../boards/BoardGate';
import type { Api } from '../api/api';
import { beginLogout, browserEnv, endServerSession, lastUser, loggedInAgain, logoutPending, rememberUser, USER_KEY, wipeLocalData, type Env } from '../auth/localData';

/** Session is who is logged in, as far as the client knows. */
export type Session = { state: 'loading' } | { state: 'out'; notice?: string } | { state: 'leaving' } | { state: 'in'; email: string; offline: boolean };

export function App({ api, env: envProp }: { api: Api; env?: Env }) {
  // One Env for the app's life: check depends on it, and runs again when it changes.
  const [env] = useState(() => envProp ?? browserEnv());
  const guest = useMemo(() => guestServices(api), [api]);
  const [session, setSession] = useState<Session>({ state: 'loading' });
  const [services, setServices] = useState<Services | null>(null);
  const [asking, setAsking] = useState<Unsent | null>(null);
  const current = useRef<Services | null>(null);
  const path = usePath();

  const openServicesOf = useCallback(async (email: string) => {
    const s = await createServices(api, email, env);
    current.current?.close();
    current.current = s;
    setServices(s);
  }, [api, env]);

  const check = useCallback(async () => {
    // A logout made offline is finished first: nothing logged-in may show
    // while the session it meant to end could still be alive.
    if ((await endServerSession(env, api)) === 'offline') return setSession({ state: 'out', notice: OFFLINE_LOGOUT });
    try {
      const me = await api.me();
      rememberUser(env, me.email);
      await openServicesOf(me.email);
      setSession({ state: 'in', email: me.email, offline: false });
    } catch (e) {
      const status = (e as { status?: number }).status;
      const cached = status === 0 ? lastUser(env) : null;
      if (!cached) return setSession({ state: 'out' });
      // Offline with a session seen before: open what this device has of that user.
      await openServicesOf(cached);
      setSession({ state: 'in', email: cached, offline: true });
    }
  }, [api, env, openServicesOf]);

  // A read-only link's page needs nobody logged in, and opens nothing of
  // whoever may be (LinkPage); leaving it for the app checks the session then.
  const link = linkTokenOf(path);
  useEffect(() => {
    if (!link) void check();
  }, [check, link]);

  // The network is back: end the server session a logout made offline left.
  useEffect(() => {
    const online = () => {
      if (!logoutPending(env)) return;
      void endServerSession(env, api).then((r) => {
        if (r === 'done') setSession((s) => (s.state === 'out' && s.notice === OFFLINE_LOGOUT ? { state: 'out' } : s));
      });
    };
    window.addEventListener('online', online);
    return () => window.removeEventListener('online', online);
  }, [api, env]);

  // Another tab logged out (or in as someone else): this one follows, so it
  // neither shows nor writes the data that tab deleted.
  const email = session.state === 'in' ? session.email : null;
  useEffect(() => {
    if (!email) return;
    const changed = (e: StorageEvent) => {
      if (e.key === USER_KEY && e.newValue !== email) window.location.reload();
    };
    window.addEventListener('storage', changed);
    return () => window.removeEventListener('storage', changed);
  }, [email]);

  const logoutNow = useCallback(async () => {
    setAsking(null);
    const leaving = session.state === 'in' ? session.email : null;
    beginLogout(env);
    setSession({ state: 'leaving' });
    const s = current.current;
    current.current = null;
    setServices(null);
    s?.close();
    await wipeLocalData(env, leaving ? [leaving] : []);
    const r = await endServerSession(env, api);
    setSession(r === 'offline' ? { state: 'out', notice: OFFLINE_LOGOUT } : { state: 'out' });
  }, [api, env, session]);

  const logout = useCallback(async () => {
    const unsent = (await current.current?.unsent()) ?? { edits: 0, history: 0 };
    if (unsent.edits + unsent.history > 0) setAsking(unsent);
    else await logoutNow();
  }, [logoutNow]);

  const sessionLost = useCallback(() => setSession({ state: 'out' }), []);
  const beforeLogin = useCallback(async () => {
    await endServerSession(env, api);
  }, [api, env]);
  const loggedIn = useCallback(() => {
    loggedInAgain(env);
    void check();
  }, [env, check]);

  if (link) return <LinkPage token={link} />;
  let screen;
  if (session.state === 'loading' || session.state === 'leaving' || (session.state === 'in' && !services)) {
    screen = (
      <main className="centered" aria-busy="true">
        <p>{session.state === 'leaving' ? 'Logging out…' : 'Loading…'}</p>
      </main>
    );
  } else if (session.state === 'out') {
    screen = <Login onLoggedIn={loggedIn} notice={session.notice} beforeLogin={beforeLogin} />;
  } else {
    const boardId = boardIdOf(path);
    screen = boardId ? (
      <BoardGate key={boardId} boardId={boardId} email={session.email} onLogout={logout} onSessionLost={sessionLost} />
    ) : (
      <BoardList email={session.email} onLogout={logout} onSessionLost={sessionLost} />
    );
  }
  return (
    <ServicesContext.Provider value={session.state === 'in' && services ? services : guest}>
      {screen}
      {asking && (
        <Dialog title="Log out?" onClose={() => setAsking(null)}>
          <p>{unsentText(asking)}</p>
          <p>They are stored on this device only. Cancel and reconnect to send them; logging out deletes them.</p>
          <div className="row dialog-actions">
            <button type="button" onClick={() => setAsking(null)} data-autofocus>
              Cancel
            </button>
            <button type="button" className="danger" onClick={() => void logoutNow()}>
              Log out and discard
            </button>
          </div>
        </Dialog>
      )}
    </ServicesContext.Provider>
  );
}
