import { useCallback, useEffect, useId, useState } from 'react';
import { useServices } from '../app/services';
import { Header } from '../app/Header';
import { navigate } from '../app/router';
import type { ApiError } from '../api/api';
import type { Access } from '../api/types';
import { BoardScreen } from '../canvas/BoardScreen';
import { renameBoard } from './BoardList';

type Gate = { s: 'loading' } | { s: 'unclaimed' } | { s: 'denied' } | { s: 'open'; access: Access; offline: boolean } | { s: 'offline-unknown' } | { s: 'error'; message: string };

const accessKey = (id: string) => `access:${id}`;

/** BoardGate decides what /b/<id> shows: claim it, ask for access, or the board. */
export function BoardGate({ boardId, email, onLogout, onSessionLost }: { boardId: string; email: string; onLogout: () => void; onSessionLost: () => void }) {
  const { api, store } = useServices();
  const [gate, setGate] = useState<Gate>({ s: 'loading' });
  const [busy, setBusy] = useState(false);
  const [claimError, setClaimError] = useState('');

  const check = useCallback(async () => {
    try {
      const access = await api.access(boardId);
      if (access.isUnclaimed) return setGate({ s: 'unclaimed' });
      if (!access.hasAccess) return setGate({ s: 'denied' });
      await store.setValue(accessKey(boardId), access);
      setGate({ s: 'open', access, offline: false });
    } catch (e) {
      const x = e as ApiError;
      if (x.status === 401) return onSessionLost();
      if (x.status === 0) {
        const cached = await store.getValue<Access>(accessKey(boardId));
        return setGate(cached ? { s: 'open', access: cached, offline: true } : { s: 'offline-unknown' });
      }
      setGate({ s: 'error', message: x.message });
    }
  }, [api, store, boardId, onSessionLost]);

  useEffect(() => {
    void check();
  }, [check]);

  async function claim() {
    setBusy(true);
    setClaimError('');
    try {
      await api.claim(boardId);
      await renameBoard(api, boardId, boardId);
      await check();
    } catch (e) {
      setClaimError((e as ApiError).status === 409 ? 'Someone claimed this board just now. Ask them to invite you.' : (e as ApiError).message);
    } finally {
      setBusy(false);
    }
  }

  if (gate.s === 'open') {
    return <BoardScreen boardId={boardId} email={email} access={gate.access} onAccessChange={(access) => setGate({ ...gate, access })} onLogout={onLogout} onSessionLost={onSessionLost} />;
  }
  let body;
  switch (gate.s) {
    case 'loading':
      body = <p aria-busy="true">Opening the board…</p>;
      break;
    case 'unclaimed':
      body = (
        <>
          <h1>This board is free</h1>
          <p>
            Nobody has claimed the board <strong>{boardId}</strong> yet. Claim it to become its owner: you can then invite others.
          </p>
          <button type="button" className="primary" onClick={claim} disabled={busy}>
            Claim this board
          </button>
          <p className="error" role="alert">
            {claimError}
          </p>
        </>
      );
      break;
    case 'denied':
      body = <NoAccess boardId={boardId} email={email} />;
      break;
    case 'offline-unknown':
      body = (
        <>
          <h1>You are offline</h1>
          <p>This board has not been opened on this device before, so there is no copy of it here. Connect and try again.</p>
          <button type="button" onClick={check}>
            Try again
          </button>
        </>
      );
      break;
    case 'error':
      body = (
        <>
          <h1>The board could not be opened</h1>
          <p className="error">{gate.message}</p>
        </>
      );
      break;
  }
  return (
    <>
      <Header email={email} onLogout={onLogout} />
      <main className="centered">
        <div className="card">
          {body}
          <p>
            <a
              href="/"
              onClick={(e) => {
                e.preventDefault();
                navigate('/');
              }}
            >
              Back to your boards
            </a>
          </p>
        </div>
      </main>
    </>
  );
}

/**
 * NoAccess tells a user who is not invited what to do. The server does not
 * name a board's owner to non-members (a board's link must not give away
 * its owner's address), so the page cannot say who the owner is: it asks the
 * user to go back to whoever shared the link, with a ready message to send.
 */
function NoAccess({ boardId, email }: { boardId: string; email: string }) {
  const [copied, setCopied] = useState('');
  const messageId = useId();
  const message = `Please invite ${email} to the Corkboard board ${window.location.origin}/b/${boardId}`;

  async function copy() {
    try {
      await navigator.clipboard.writeText(message);
      setCopied('Copied. Paste it in a message to the person who shared the link.');
    } catch {
      // No clipboard (permissions, an old browser): select the text instead.
      const field = document.getElementById(messageId) as HTMLTextAreaElement | null;
      field?.select();
      setCopied('Press Ctrl+C (Cmd+C on a Mac) to copy the selected message.');
    }
  }

  return (
    <>
      <h1>You can't open this board</h1>
      <p>
        The board <strong>{boardId}</strong> belongs to someone who has not invited you. Corkboard does not show who owns a board to people outside
        it, so ask the person who shared this link with you to invite your address, <strong>{email}</strong>.
      </p>
      <label htmlFor={messageId}>Message to send them</label>
      <textarea id={messageId} readOnly rows={3} value={message} />
      <p>
        <button type="button" onClick={copy}>
          Copy the message
        </button>
      </p>
      <p role="status">{copied}</p>
    </>
  );
}
