import { useCallback, useEffect, useMemo, useState } from 'react';
import { ServicesContext, linkServices } from '../app/services';
import { createApi, linkFetch, type ApiError } from '../api/api';
import { linkState, viewerAccess, type LinkState } from './links';
import { BoardScreen } from '../canvas/BoardScreen';

/**
 * LinkPage is /l/<token>: the board a read-only link opens, view only, to
 * whoever holds the link, logged in or not (docs/web-client.md, "Read-only
 * links"). Its requests carry the token (linkFetch), it keeps nothing on
 * the device, and when the link stops working (revoked or expired, even
 * while open) it says so.
 */
export function LinkPage({ token, fetcher }: { token: string; fetcher?: typeof fetch }) {
  const api = useMemo(() => createApi(linkFetch(token, fetcher)), [token, fetcher]);
  const services = useMemo(() => linkServices(api, token), [api, token]);
  const [state, setState] = useState<LinkState>({ s: 'loading' });

  const check = useCallback(async () => {
    setState({ s: 'loading' });
    try {
      setState(linkState({ info: await api.link() }));
    } catch (e) {
      setState(linkState({ error: e as ApiError }));
    }
  }, [api]);

  useEffect(() => {
    void check();
  }, [check]);
  useEffect(() => () => services.close(), [services]);

  const gone = useCallback(() => setState({ s: 'gone' }), []);
  const noop = useCallback(() => {}, []);

  if (state.s === 'open') {
    return (
      <ServicesContext.Provider value={services}>
        <BoardScreen boardId={state.info.boardId} email="" access={viewerAccess()} onAccessChange={noop} onLogout={noop} onSessionLost={gone} link />
      </ServicesContext.Provider>
    );
  }
  let body;
  switch (state.s) {
    case 'loading':
      body = <p aria-busy="true">Opening the board…</p>;
      break;
    case 'gone':
      body = (
        <>
          <h1>This link no longer works</h1>
          <p>The board's owner has revoked it, or it has expired. Ask them for a new link, or to invite you.</p>
        </>
      );
      break;
    case 'error':
      body = (
        <>
          <h1>{state.offline ? 'You are offline' : 'The board could not be opened'}</h1>
          <p className="error">{state.message}</p>
          <button type="button" onClick={() => void check()}>
            Try again
          </button>
        </>
      );
      break;
  }
  return (
    <main className="centered">
      <div className="card" data-link-state={state.s}>
        {body}
      </div>
    </main>
  );
}
