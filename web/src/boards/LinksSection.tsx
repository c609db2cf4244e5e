import { useCallback, useEffect, useId, useState } from 'react';
import { useServices } from '../app/services';
import type { ApiError } from '../api/api';
import type { NewReadOnlyLink, ReadOnlyLink } from '../api/types';
import { DEFAULT_EXPIRY, EXPIRY_CHOICES, when } from './links';

/**
 * LinksSection is the share dialog's part for read-only links: the board's
 * working links (created, expires) each with Revoke, and a form that makes
 * one with an expiry; a new link's address is shown (and copied) this once,
 * since the server keeps only its hash.
 */
export function LinksSection({ boardId }: { boardId: string }) {
  const { api } = useServices();
  const [links, setLinks] = useState<ReadOnlyLink[] | null>(null);
  const [hours, setHours] = useState(DEFAULT_EXPIRY);
  const [created, setCreated] = useState<NewReadOnlyLink | null>(null);
  const [msg, setMsg] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const expiryId = useId();
  const urlId = useId();

  const load = useCallback(() => api.listLinks(boardId).then((r) => setLinks(r.links), (e: ApiError) => setError(e.message)), [api, boardId]);
  useEffect(() => {
    void load();
  }, [load]);

  async function create() {
    setError('');
    setMsg('');
    setBusy(true);
    try {
      const l = await api.createLink(boardId, hours);
      setCreated(l);
      await copy(l.url);
      await load();
    } catch (e) {
      setError((e as ApiError).message);
    } finally {
      setBusy(false);
    }
  }

  async function copy(url: string) {
    try {
      await navigator.clipboard.writeText(url);
      setMsg('Link copied. Anyone who has it can view this board until it expires or you revoke it.');
    } catch {
      // No clipboard (permissions, an old browser): select the address instead.
      const field = document.getElementById(urlId) as HTMLInputElement | null;
      field?.select();
      setMsg('Press Ctrl+C (Cmd+C on a Mac) to copy the selected link.');
    }
  }

  async function revoke(l: ReadOnlyLink) {
    setError('');
    try {
      await api.revokeLink(boardId, l.id);
      if (created?.id === l.id) setCreated(null);
      setMsg('Link revoked: whoever opens it now, or has it open, is cut off.');
    } catch (e) {
      const x = e as ApiError;
      if (x.status !== 404) setError(x.message); // 404: gone already (expired, or revoked elsewhere)
    }
    await load();
  }

  return (
    <section aria-labelledby={`${expiryId}-h`}>
      <h3 id={`${expiryId}-h`}>Read-only links</h3>
      <p>A read-only link opens this board to anyone who has it, without logging in: they see it live but cannot change anything, use AI or see its history.</p>
      <div className="link-create">
        <label htmlFor={expiryId}>Expires after</label>
        <select id={expiryId} value={hours} onChange={(e) => setHours(Number(e.target.value))}>
          {EXPIRY_CHOICES.map((c) => (
            <option key={c.hours} value={c.hours}>
              {c.label}
            </option>
          ))}
        </select>
        <button type="button" onClick={() => void create()} disabled={busy}>
          Create read-only link
        </button>
      </div>
      {created && (
        <div className="new-link">
          <label htmlFor={urlId} className="sr-only">
            The new link
          </label>
          <input id={urlId} readOnly value={created.url} onFocus={(e) => e.currentTarget.select()} />
          <button type="button" onClick={() => void copy(created.url)}>
            Copy link
          </button>
        </div>
      )}
      {created && (
        <p className="muted">Shown this once: copy it now.</p>
      )}
      <p role="status">{msg}</p>
      <p className="error" role="alert">
        {error}
      </p>
      {links === null ? (
        <p>Loading…</p>
      ) : links.length === 0 ? (
        <p>No links.</p>
      ) : (
        <ul className="plain link-list">
          {links.map((l) => (
            <li key={l.id} data-link-id={l.id}>
              <span className="link-when">
                <span>Expires {when(l.expiresAt)}</span>
                <span className="muted">Created {when(l.createdAt)}</span>
              </span>
              <button type="button" onClick={() => void revoke(l)} aria-label={`Revoke the link created ${when(l.createdAt)}`}>
                Revoke
              </button>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
