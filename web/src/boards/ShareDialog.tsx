import { useEffect, useId, useState, type FormEvent } from 'react';
import { useServices } from '../app/services';
import type { ApiError } from '../api/api';
import { Dialog } from '../app/Dialog';

/** ShareDialog lets the owner list, add and remove collaborators. */
export function ShareDialog({ boardId, onClose }: { boardId: string; onClose: () => void }) {
  const { api } = useServices();
  const [emails, setEmails] = useState<string[] | null>(null);
  const [email, setEmail] = useState('');
  const [msg, setMsg] = useState('');
  const [error, setError] = useState('');
  const inputId = useId();

  useEffect(() => {
    api.listInvites(boardId).then(
      (r) => setEmails(r.invitedEmails),
      (e: ApiError) => setError(e.message),
    );
  }, [api, boardId]);

  async function add(e: FormEvent) {
    e.preventDefault();
    setError('');
    try {
      const r = await api.invite(boardId, email.trim());
      setEmails(r.invitedEmails);
      setMsg(r.added ? `${email.trim()} can now open this board.` : `${email.trim()} was already invited.`);
      setEmail('');
    } catch (err) {
      setError((err as ApiError).message);
    }
  }

  async function remove(addr: string) {
    setError('');
    try {
      const r = await api.uninvite(boardId, addr);
      setEmails(r.invitedEmails);
      setMsg(`${addr} no longer has access.`);
    } catch (err) {
      setError((err as ApiError).message);
    }
  }

  return (
    <Dialog title="Share this board" onClose={onClose}>
      <p>
        People you invite log in with their e-mail address. On the free plan they can view the board; on a paid plan they can edit it too.
      </p>
      <form onSubmit={add} className="row">
        <label htmlFor={inputId}>E-mail address to invite</label>
        <input id={inputId} type="email" required value={email} onChange={(e) => setEmail(e.target.value)} />
        <button type="submit" className="primary">
          Invite
        </button>
      </form>
      <p role="status">{msg}</p>
      <p className="error" role="alert">
        {error}
      </p>
      <h3>Collaborators</h3>
      {emails === null ? (
        <p>Loading…</p>
      ) : emails.length === 0 ? (
        <p>Nobody yet.</p>
      ) : (
        <ul className="plain">
          {emails.map((a) => (
            <li key={a} className="row">
              <span>{a}</span>
              <button type="button" onClick={() => remove(a)} aria-label={`Remove ${a}`}>
                Remove
              </button>
            </li>
          ))}
        </ul>
      )}
    </Dialog>
  );
}
