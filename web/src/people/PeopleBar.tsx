import { useEffect, useRef, useState, useSyncExternalStore, type KeyboardEvent } from 'react';
import type { PresenceStore } from '../sync/presence';
import type { FollowStore } from './follow';
import { peopleOf, personLabel, shownOf, summaryLabel, type People, type Person } from './people';
import './people.css';

/** MAX_SHOWN is how many avatars the top bar shows (the last place becomes "+N" when more are here); PHONE_SHOWN on a phone. */
const MAX_SHOWN = 5;
const PHONE_SHOWN = 2;
/** MAX_HELD is how many connections the list pages in with `who` at most (past it, the count says the rest). */
const MAX_HELD = 1000;
const PHONE = '(max-width: 48rem)';

/**
 * peopleKey is who is here as a string (e-mail, colour, idle, connections):
 * a moving pointer makes a new presence snapshot, not a new key, so the
 * top bar does not re-render with every pointer.
 */
function peopleKey(presence: PresenceStore): string {
  const p = peopleOf(presence.getSnapshot());
  return JSON.stringify(p);
}

function usePhone(): boolean {
  return useSyncExternalStore(
    (cb) => {
      const m = window.matchMedia?.(PHONE);
      m?.addEventListener('change', cb);
      return () => m?.removeEventListener('change', cb);
    },
    () => window.matchMedia?.(PHONE).matches ?? false,
  );
}

/**
 * PeopleBar is "Who is here" in the top bar (docs/web-client.md): an
 * avatar per person in their pointer's colour, idle ones dimmed, "+N" for
 * the rest; a click opens the list, where each person can be gone to or
 * followed, and the owner can bring everyone to their view.
 */
export function PeopleBar({ presence, follow, isOwner }: { presence: PresenceStore; follow: FollowStore; isOwner: boolean }) {
  const key = useSyncExternalStore(presence.onChange, () => peopleKey(presence));
  const people = JSON.parse(key) as People;
  const { following } = useSyncExternalStore(follow.onChange, follow.getSnapshot);
  const phone = usePhone();
  const [open, setOpen] = useState<{ email: string | null } | null>(null);
  const wrap = useRef<HTMLDivElement>(null);
  const opener = useRef<HTMLElement | null>(null);

  // The list asks the server for the people it does not hold yet, a page at a time, while it is open.
  const more = people.unlisted > 0;
  const held = people.total - people.unlisted;
  useEffect(() => {
    if (open && more && held < MAX_HELD) presence.who();
  }, [open, more, held, presence]);

  useEffect(() => {
    if (!open) return;
    const outside = (e: PointerEvent) => {
      if (!wrap.current?.contains(e.target as Node)) setOpen(null);
    };
    document.addEventListener('pointerdown', outside);
    return () => document.removeEventListener('pointerdown', outside);
  }, [open]);

  if (!people.total) return null;
  const { shown, more: plus } = shownOf(people, phone ? PHONE_SHOWN : MAX_SHOWN);
  const summary = summaryLabel(people);
  const close = () => {
    setOpen(null);
    opener.current?.focus();
  };
  const toggle = (email: string | null, el: HTMLElement) => {
    opener.current = el;
    setOpen(open && open.email === email ? null : { email });
  };

  return (
    <div className="people" ref={wrap}>
      <ul className="avatars people-avatars" aria-label={summary}>
        {shown.map((p) => (
          <li key={p.email}>
            <button
              type="button"
              className={`avatar${p.idle ? ' idle' : ''}${p.me ? ' me' : ''}`}
              style={{ borderColor: p.color }}
              aria-label={personLabel(p)}
              title={personLabel(p)}
              aria-haspopup="dialog"
              aria-expanded={open?.email === p.email}
              data-email={p.email}
              // The letters are drawn from data-text (people.css): the name is the address, not "AP".
              data-text={p.initials}
              onClick={(e) => toggle(p.email, e.currentTarget)}
            />
          </li>
        ))}
        {plus > 0 && (
          <li>
            <button type="button" className="avatar more" aria-label={`${summary}: show everyone`} title={summary} aria-haspopup="dialog" aria-expanded={open?.email === null} data-text={`+${plus}`} onClick={(e) => toggle(null, e.currentTarget)} />
          </li>
        )}
      </ul>
      {open && <PeopleList people={people} focusEmail={open.email} followingId={following && !following.once ? following.id : null} isOwner={isOwner} follow={follow} loading={more && held < MAX_HELD} onClose={close} onDone={() => setOpen(null)} />}
    </div>
  );
}

/** PeopleList is the popover: everyone here, with Go to and Follow for each other person. */
function PeopleList({ people, focusEmail, followingId, isOwner, follow, loading, onClose, onDone }: { people: People; focusEmail: string | null; followingId: string | null; isOwner: boolean; follow: FollowStore; loading: boolean; onClose: () => void; onDone: () => void }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const row = focusEmail ? box.current?.querySelector<HTMLElement>(`[data-person="${CSS.escape(focusEmail)}"]`) : null;
    const target = row?.querySelector<HTMLElement>('button') ?? box.current?.querySelector<HTMLElement>('button') ?? box.current;
    target?.focus();
    row?.scrollIntoView?.({ block: 'nearest' });
    // Once, when it opens: a list that grows keeps the focus where it is.
  }, []);
  const onKeyDown = (e: KeyboardEvent) => {
    e.stopPropagation(); // the canvas's shortcuts listen on the document
    if (e.key === 'Escape') {
      e.preventDefault();
      onClose();
    }
  };
  const act = (fn: () => void) => () => {
    fn();
    onDone();
  };
  return (
    <div ref={box} className="people-popover" role="dialog" aria-label="Who is here" tabIndex={-1} onKeyDown={onKeyDown}>
      <p className="people-head">{summaryLabel(people)}</p>
      <ul className="people-list plain">
        {people.list.map((p) => (
          <PersonRow key={p.email} p={p} current={p.email === focusEmail} following={!!followingId && p.ids.includes(followingId)} follow={follow} act={act} />
        ))}
      </ul>
      {people.unlisted > 0 && (
        <p className="muted people-more" role="status">
          {loading ? `Loading ${people.unlisted} more…` : `and ${people.unlisted} more`}
        </p>
      )}
      {isOwner && people.total > 1 && (
        <button type="button" className="primary people-summon" onClick={act(() => follow.bringEveryone())}>
          Bring everyone here
        </button>
      )}
    </div>
  );
}

function PersonRow({ p, current, following, follow, act }: { p: Person; current: boolean; following: boolean; follow: FollowStore; act: (fn: () => void) => () => void }) {
  const peer = { id: p.ids[0], email: p.email, color: p.color };
  return (
    <li className={`person${current ? ' current' : ''}${p.idle ? ' idle' : ''}`} data-person={p.email}>
      <span className="avatar" style={{ borderColor: p.color }} aria-hidden="true">
        {p.initials}
      </span>
      <span className="person-text">
        <span className="person-name">
          {p.name}
          {p.me && <span className="muted"> (you)</span>}
          {p.idle && <span className="idle-tag">idle</span>}
        </span>
        <span className="person-email muted">{p.email}</span>
      </span>
      {!p.me && p.ids.length > 0 && (
        <span className="person-actions">
          <button type="button" aria-label={`Go to ${p.email}`} title="Jump to where they are looking" onClick={act(() => follow.follow(peer, true))}>
            Go to
          </button>
          <button type="button" aria-label={`Follow ${p.email}`} aria-pressed={following} onClick={act(() => (following ? follow.stop() : follow.follow(peer)))}>
            {following ? 'Following' : 'Follow'}
          </button>
        </span>
      )}
    </li>
  );
}
