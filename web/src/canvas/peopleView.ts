// What the canvas shows about other people and about what merges did to my
// changes (docs/web-client.md, "Is editing" and "Marks on notes"): pure
// view-model functions, so the components only render their answers.
import type { Peer } from '../api/types';
import type { Mark } from '../sync/marks';

/** OVERLAP_NAME is the accessible name of a note's button for an `overlap` mark. */
export const OVERLAP_NAME = 'Changed by someone else at the same time — see History';
/** REVIVED_NAME is the accessible name of a note's button for a `revived` mark. */
export const REVIVED_NAME = 'Brought back after you deleted it — see History';

/** nameOf is the name part of an e-mail address ("ana" for ana@example.com). */
export function nameOf(email: string): string {
  const at = email.indexOf('@');
  return at > 0 ? email.slice(0, at) : email;
}

/** EditingLabel is what a note shows while others have its editor open. */
export interface EditingLabel {
  /** text is short, for the note: "ana is editing". */
  text: string;
  /** full names everyone by address, for the tooltip and screen readers: "ana@example.com is editing". */
  full: string;
  /** color is the first editor's presence colour. */
  color: string;
}

/** editingLabel is the label for a note edited by peers, or null when nobody else edits it. */
export function editingLabel(peers: readonly Peer[]): EditingLabel | null {
  const people = distinct(peers);
  if (!people.length) return null;
  const names = people.map((p) => nameOf(p.email));
  const text = people.length === 1 ? `${names[0]} is editing` : people.length === 2 ? `${names[0]} and ${names[1]} are editing` : `${names[0]} and ${people.length - 1} others are editing`;
  return { text, full: `${list(people.map((p) => p.email))} ${people.length === 1 ? 'is' : 'are'} editing`, color: people[0].color };
}

/** editorNotice is what my open editor says about others editing the same note, or "". */
export function editorNotice(peers: readonly Peer[]): string {
  const people = distinct(peers);
  if (!people.length) return '';
  return `${list(people.map((p) => p.email))} ${people.length === 1 ? 'is' : 'are'} also editing this note`;
}

/** distinct keeps one entry per address (one person with two tabs is one name). */
function distinct(peers: readonly Peer[]): Peer[] {
  const seen = new Set<string>();
  return peers.filter((p) => !seen.has(p.email) && !!seen.add(p.email));
}

function list(xs: string[]): string {
  return xs.length <= 1 ? (xs[0] ?? '') : `${xs.slice(0, -1).join(', ')} and ${xs.at(-1)}`;
}

/** NoteMarks are a note's marks as its buttons show them: the newest of each kind. */
export interface NoteMarks {
  overlap?: Mark;
  revived?: Mark;
}

/** marksByNote groups the marks of notes by note id (the newest of each kind); the same map for the same marks. */
export function marksByNote(marks: readonly Mark[]): ReadonlyMap<string, NoteMarks> {
  const hit = cache.get(marks);
  if (hit) return hit;
  const out = new Map<string, NoteMarks>();
  for (const m of marks) {
    if (m.table !== 'note') continue;
    const cur = out.get(m.id) ?? {};
    const had = cur[m.kind];
    if (!had || had.version < m.version) out.set(m.id, { ...cur, [m.kind]: m });
  }
  cache.set(marks, out);
  return out;
}
const cache = new WeakMap<readonly Mark[], ReadonlyMap<string, NoteMarks>>();

/** markKey names a mark (the marks a board has seen are kept by it). */
export const markKey = (m: Mark) => `${m.table}:${m.id}:${m.kind}:${m.version}`;

/**
 * arrivedRevived lists the `revived` marks of notes that are not in seen
 * (the marks already known), and adds every mark to seen. The board seeds
 * seen with the marks kept from before a reload, so only a revival that
 * arrives while the board is open is announced.
 */
export function arrivedRevived(seen: Set<string>, marks: readonly Mark[]): Mark[] {
  const out: Mark[] = [];
  for (const m of marks) {
    const k = markKey(m);
    if (seen.has(k)) continue;
    seen.add(k);
    if (m.kind === 'revived' && m.table === 'note') out.push(m);
  }
  return out;
}

/** revivedAnnouncement is what the live region says when a note I deleted is brought back. */
export function revivedAnnouncement(titles: readonly string[]): string {
  return titles.map((t) => `A note you deleted was brought back: ${t || 'Untitled'}.`).join(' ');
}
