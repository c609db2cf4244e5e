import { useSyncExternalStore } from 'react';
import type { PresenceStore } from '../sync/presence';

const MAX_SHOWN = 4;

/**
 * peopleKey lists the other people on the board (one line per address,
 * with its colour), sorted: a string, so a moving pointer (a new presence
 * snapshot) does not re-render the avatars.
 */
function peopleKey(p: PresenceStore): string {
  const seen = new Map<string, string>();
  for (const peer of p.getSnapshot().peers.values()) if (!seen.has(peer.email)) seen.set(peer.email, peer.color);
  return [...seen].map(([email, color]) => `${email}\t${color}`).sort().join('\n');
}

/** PresenceAvatars shows who else has the board open: a ring in their pointer colour and their initial. */
export function PresenceAvatars({ presence }: { presence: PresenceStore }) {
  const key = useSyncExternalStore(presence.onChange, () => peopleKey(presence));
  const people = key ? key.split('\n').map((l) => l.split('\t') as [string, string]) : [];
  if (!people.length) return null;
  const shown = people.slice(0, MAX_SHOWN);
  const more = people.length - shown.length;
  const label = `Also here: ${people.map(([e]) => e).join(', ')}`;
  return (
    <ul className="avatars" aria-label={label} title={label}>
      {shown.map(([email, color]) => (
        <li key={email} className="avatar" style={{ borderColor: color }} aria-label={email}>
          <span aria-hidden="true">{(email[0] ?? '?').toUpperCase()}</span>
        </li>
      ))}
      {more > 0 && (
        <li className="avatar more" aria-label={`and ${more} more`}>
          <span aria-hidden="true">+{more}</span>
        </li>
      )}
    </ul>
  );
}
