import { useEffect, useId, useState, type FormEvent } from 'react';
import { useServices } from '../app/services';
import type { ApiError } from '../api/api';
import type { InviteeAccess, Invites } from '../api/types';
import { Dialog } from '../app/Dialog';
import { LinksSection } from './LinksSection';

/** orList joins names as people read them: "pro", "pro or team", "a, b or c". */
export function orList(names: readonly string[]): string {
  if (names.length <= 1) return names.join('');
  return `${names.slice(0, -1).join(', ')} or ${names[names.length - 1]}`;
}

/**
 * accessWhy says what an invitee can do and why, from their plan: the
 * board guard's rule (docs/billing.md, "Invitee may edit").
 */
export function accessWhy(a: InviteeAccess, editPlans: readonly string[]): string {
  if (a.canEdit) return `Can edit: their plan (${a.plan}) lets invitees edit.`;
  const upgrade = editPlans.length ? ` They can edit once their plan is ${orList(editPlans)}.` : '';
  return `View only: on the ${a.plan} plan, invitees view boards.${upgrade}`;
}

/** rows pairs each invited address with its access, when the server said it. */
function rows(r: Invites): { email: string; access?: InviteeAccess }[] {
  return r.invitedEmails.map((email) => ({ email, access: r.invitees?.find((a) => a.email === email) }));
}

/**
 * ShareDialog lets the owner list, add and remove collaborators, and says
 * what each one can do (view or edit) and why (their plan), before and
 * after inviting.
 */
export function ShareDialog({ boardId, onClose }: { boardId: string; onClose: () => void }) {
  const { api } = useServices();
  const [invites, setInvites] = useState<Invites | null>(null);
  const [email, setEmail] = useState('');
  const [msg, setMsg] = useState('');
  const [error, setError] = useState('');
  const inputId = useId();
  const editPlans = invites?.editPlans ?? [];

  useEffect(() => {
    api.listInvites(boardId).then(setInvites, (e: ApiError) => setError(e.message));
  }, [api, boardId]);

  async function add(e: FormEvent) {
    e.preventDefault();
    setError('');
    const addr = email.trim();
    try {
      const r = await api.invite(boardId, addr);
      setInvites(r);
      const who = r.invitee?.email ?? addr;
      const what = r.invitee ? ' ' + accessWhy(r.invitee, r.editPlans ?? []) : '';
      if (!r.added) setMsg(`${who} was already invited.${what}`);
      else setMsg(`${who} is invited${r.mailed ? ' and gets an e-mail with the link' : ''}.${what}`);
      setEmail('');
    } catch (err) {
      setError((err as ApiError).message);
    }
  }

  async function remove(addr: string) {
    setError('');
    try {
      setInvites(await api.uninvite(boardId, addr));
      setMsg(`${addr} no longer has access.`);
    } catch (err) {
      setError((err as ApiError).message);
    }
  }

  return (
    <Dialog title="Share this board" onClose={onClose}>
      <p>
        People you invite get an e-mail with the board's link and log in with their address. What they can do depends on their own plan:{' '}
        {editPlans.length ? (
          <>
            on {orList(editPlans)} they can view and edit the board; on other plans (such as free) they can only view it.
          </>
        ) : (
          <>on every plan they can only view it.</>
        )}{' '}
        When their plan changes, their open board follows at once.
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
      {invites === null ? (
        <p>Loading…</p>
      ) : invites.invitedEmails.length === 0 ? (
        <p>Nobody yet.</p>
      ) : (
        <ul className="plain">
          {rows(invites).map(({ email: a, access }) => (
            <li key={a} className="row">
              <span>{a}</span>
              {access && (
                <span className="muted" data-access={access.canEdit ? 'edit' : 'view'}>
                  {accessWhy(access, editPlans)}
                </span>
              )}
              <button type="button" onClick={() => remove(a)} aria-label={`Remove ${a}`}>
                Remove
              </button>
            </li>
          ))}
        </ul>
      )}
      <LinksSection boardId={boardId} />
    </Dialog>
  );
}
