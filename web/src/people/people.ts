// Who is here, as the top bar shows it (docs/web-client.md, "Who is here,
// follow and bring everyone"): pure functions from the presence snapshot,
// so the components only render their answers.
import type { Peer } from '../api/types';
import type { PresenceState } from '../sync/presence';
import { nameOf } from '../canvas/peopleView';

/** Person is one person on the board: their connections (tabs, devices) are one. */
export interface Person {
  email: string;
  /** name is the e-mail's name part ("ana" for ana@example.com). */
  name: string;
  /** initials are one or two letters from the name ("AL" for ana.lopez, "An" for ana). */
  initials: string;
  /** color is their pointer's colour (derived from the e-mail: the same on every connection). */
  color: string;
  /** ids are their connections; the first is the one to follow (an active one before an idle one). */
  ids: string[];
  /** idle: every connection of theirs is idle (2 minutes without activity, the server's flag). */
  idle: boolean;
  /** me: this is the person using this page (other tabs of mine included). */
  me: boolean;
}

/** People is who is here, for the top bar. */
export interface People {
  /** list: me first, then the others, active before idle, each group by name. */
  list: Person[];
  /** unlisted counts connections the server has and this page does not hold yet (a list past 100, ask with `who`). */
  unlisted: number;
  /** total is how many the top bar counts: the people listed plus the unlisted connections (each maybe a person). */
  total: number;
}

/** initialsOf is one or two letters for an e-mail: the first letters of its name's first two words, else its first two letters. */
export function initialsOf(email: string): string {
  const words = nameOf(email).split(/[._+\-\s]+/).filter(Boolean);
  if (words.length >= 2) return (words[0][0] + words[1][0]).toUpperCase();
  const w = words[0] ?? '?';
  return w[0].toUpperCase() + (w[1] ?? '').toLowerCase();
}

/** peopleOf dedupes the presence snapshot by e-mail (one person with two tabs is one avatar). */
export function peopleOf(s: Pick<PresenceState, 'me' | 'peers' | 'count'>): People {
  const byEmail = new Map<string, Person & { active: string[]; idleIds: string[] }>();
  const add = (p: Peer & { idle?: boolean }, me: boolean) => {
    let person = byEmail.get(p.email);
    if (!person) {
      person = { email: p.email, name: nameOf(p.email), initials: initialsOf(p.email), color: p.color, ids: [], idle: true, me, active: [], idleIds: [] };
      byEmail.set(p.email, person);
    }
    person.me ||= me;
    if (me) {
      // This page is active, whatever the server says of my other tabs; never followed.
      person.idle = false;
      return;
    }
    (p.idle ? person.idleIds : person.active).push(p.id);
    if (!p.idle) person.idle = false;
  };
  if (s.me) add(s.me, true);
  for (const p of s.peers.values()) add(p, s.me?.email === p.email);
  const list: Person[] = [...byEmail.values()].map(({ active, idleIds, ...p }) => ({ ...p, ids: [...active, ...idleIds] }));
  list.sort((a, b) => Number(b.me) - Number(a.me) || Number(a.idle) - Number(b.idle) || a.name.localeCompare(b.name) || a.email.localeCompare(b.email));
  const unlisted = Math.max(0, s.count - s.peers.size);
  return { list, unlisted, total: list.length + unlisted };
}

/** Shown is what fits in the top bar: the first max people and a "+N" for the rest. */
export interface Shown {
  shown: Person[];
  /** more is the "+N": people (and unlisted connections) not shown. */
  more: number;
}

/** shownOf keeps max avatars, or max − 1 and a "+N" when more than max are here. */
export function shownOf(p: People, max: number): Shown {
  if (p.total <= max) return { shown: p.list.slice(0, max), more: 0 };
  const shown = p.list.slice(0, Math.max(1, max - 1));
  return { shown, more: p.total - shown.length };
}

/** personLabel names a person for their button and screen readers: "ana@example.com (you), idle". */
export function personLabel(p: Person): string {
  return `${p.email}${p.me ? ' (you)' : ''}${p.idle ? ', idle' : ''}`;
}

/** summaryLabel names the list: "3 people here" / "1 person here". */
export function summaryLabel(p: People): string {
  return `${p.total} ${p.total === 1 ? 'person' : 'people'} here`;
}
