// The vote record of docs/markdown-format.md ("Vote record"): the content of
// a start_vote or reveal_vote changelog entry, written by the server's
// persist.RenderVote and read here so the History panel can show a vote as
// words and a ranked list rather than Markdown. The server never parses it
// back and a client never writes one (POST /log refuses the two actions).
import type { Frame, LogInfo, VoteLogAction, VoteScope } from '../api/types';
import { scopeLabel, totalText } from '../vote/vote';

/** One ranked note of a revealed vote, as the record holds it. */
export interface VoteRecordRow {
  /** rank: notes that tie share one. */
  rank: number;
  /** title: the note's title at the reveal ("Untitled note" for an empty one). */
  title: string;
  noteId: string;
  count: number;
  /** voters: empty for an anonymous vote. */
  voters: string[];
  /** deleted: the note was gone by the reveal (the record's "(deleted)"). */
  deleted: boolean;
}

/** A vote record: the vote's fields, and its ranking once revealed. */
export interface VoteRecord {
  vote: string;
  state: string;
  /** scope: null for a scope this client does not know (shown as the record's words). */
  scope: VoteScope | null;
  scopeText: string;
  perPerson: number;
  perNote: number;
  anonymous: boolean;
  endsWithTimer: boolean;
  startedBy: string;
  startedAt: string;
  voters: number;
  dots: number;
  /** results: the ranked notes, most dots first ([] before the reveal or when nobody voted). */
  results: VoteRecordRow[];
}

/** isVoteAction says whether a log entry is a vote's (no note, never restored). */
export function isVoteAction(action: string): action is VoteLogAction {
  return action === 'start_vote' || action === 'reveal_vote';
}

/** logActionText is what the History panel calls each action. */
export const logActionText: Record<LogInfo['action'], string> = {
  create_note: 'Created',
  update_note: 'Edited',
  delete_note: 'Deleted',
  rename_board: 'Renamed',
  start_vote: 'Vote started',
  reveal_vote: 'Vote results',
};

/** actionLabel names an action; one this client does not know reads as the server's word, never "undefined". */
export function actionLabel(action: string): string {
  return (logActionText as Record<string, string>)[action] ?? action.replaceAll('_', ' ');
}

const hexRun = (s: string, i: number, n: number) => (/^[0-9a-fA-F]+$/.test(s.slice(i, i + n)) && s.length >= i + n ? parseInt(s.slice(i, i + n), 16) : NaN);

// SIMPLE are the one-letter escapes of Go's strconv.Quote and of JSON.
const SIMPLE: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', n: '\n', t: '\t', r: '\r', b: '\b', f: '\f', a: '\x07', v: '\v' };

/** goUnquote reads a Go strconv.Quote string (JSON's escapes, plus \a \v \xHH \UHHHHHHHH); null if it is not one. */
export function goUnquote(s: string): string | null {
  if (s.length < 2 || s[0] !== '"' || s[s.length - 1] !== '"') return null;
  let out = '';
  for (let i = 1; i < s.length - 1; i++) {
    const c = s[i];
    if (c === '"') return null;
    if (c !== '\\') {
      out += c;
      continue;
    }
    const e = s[++i];
    if (Object.hasOwn(SIMPLE, e)) {
      out += SIMPLE[e];
      continue;
    }
    const width = e === 'x' ? 2 : e === 'u' ? 4 : e === 'U' ? 8 : 0;
    const code = width ? hexRun(s, i + 1, width) : NaN;
    if (Number.isNaN(code) || i + width >= s.length - 1 || code > 0x10ffff) return null;
    out += String.fromCodePoint(code);
    i += width;
  }
  return out;
}

/** cells splits one Markdown table row at its unescaped pipes, unescaping `\|` and `\\`. */
export function cells(row: string): string[] {
  const out: string[] = [];
  let cur = '';
  for (let i = 0; i < row.length; i++) {
    const c = row[i];
    if (c === '\\' && i + 1 < row.length) cur += row[++i];
    else if (c === '|') {
      out.push(cur.trim());
      cur = '';
    } else cur += c;
  }
  out.push(cur.trim());
  // The row's leading and closing pipes leave an empty cell at each end.
  if (out[0] === '') out.shift();
  if (out[out.length - 1] === '') out.pop();
  return out;
}

function parseScope(s: string): VoteScope | null {
  if (s === 'all') return { kind: 'all' };
  const sp = s.indexOf(' ');
  const [kind, rest] = sp < 0 ? [s, ''] : [s.slice(0, sp), s.slice(sp + 1)];
  if (kind === 'frame' && rest) return { kind: 'frame', frameId: rest };
  if (kind === 'type' && rest) return { kind: 'type', type: rest };
  return null;
}

/**
 * parseVoteRecord reads a vote record. It throws on text that is not one
 * (no front matter, or no `vote` field); fields it does not know are
 * skipped, so a newer server's record still reads.
 */
export function parseVoteRecord(md: string): VoteRecord {
  const lines = md.replace(/\r\n/g, '\n').split('\n');
  if (lines[0] !== '---') throw new Error('Not a vote record: no front matter.');
  const end = lines.indexOf('---', 1);
  if (end < 0) throw new Error('Not a vote record: the front matter is not closed.');
  const f = new Map<string, string>();
  for (const l of lines.slice(1, end)) {
    const c = l.indexOf(':');
    if (c > 0) f.set(l.slice(0, c).trim(), l.slice(c + 1).trim());
  }
  const str = (k: string) => {
    const v = f.get(k);
    return v === undefined ? '' : (goUnquote(v) ?? v);
  };
  const int = (k: string) => {
    const n = Number(f.get(k));
    return Number.isInteger(n) ? n : 0;
  };
  if (!f.has('vote')) throw new Error('Not a vote record: no vote field.');
  const scopeText = str('scope');
  const results: VoteRecordRow[] = [];
  // The ranking: the table's rows after its header and its |---| line.
  const table = lines.slice(end + 1).filter((l) => l.startsWith('|'));
  for (const row of table.slice(2)) {
    const [rank, note, count, voters = ''] = cells(row);
    if (note === undefined) continue;
    // "<title> (<note id>)": the last " (" starts the ID, so a title may hold parentheses.
    const at = note.lastIndexOf(' (');
    const title = at >= 0 && note.endsWith(')') ? note.slice(0, at) : note;
    const noteId = at >= 0 && note.endsWith(')') ? note.slice(at + 2, -1) : '';
    results.push({
      rank: Number(rank) || results.length + 1,
      title,
      noteId,
      count: Number(count) || 0,
      voters: voters ? voters.split(', ') : [],
      deleted: title === '(deleted)',
    });
  }
  return {
    vote: str('vote'),
    state: str('state'),
    scope: parseScope(scopeText),
    scopeText,
    perPerson: int('perPerson'),
    perNote: int('perNote'),
    anonymous: f.get('anonymous') === 'true',
    endsWithTimer: f.get('endsWithTimer') === 'true',
    startedBy: str('startedBy'),
    startedAt: str('startedAt'),
    voters: int('voters'),
    dots: int('dots'),
    results,
  };
}

const plural = (n: number, one: string, many = one + 's') => `${n} ${n === 1 ? one : many}`;

/**
 * voteSummary is the one line a History entry shows under its label: for a
 * start, what the vote was on and its dots ("on all notes · 3 dots each ·
 * anonymous"); for the results, the totals and the top note.
 */
export function voteSummary(action: VoteLogAction, r: VoteRecord, frames: ReadonlyMap<string, Frame>): string {
  if (action === 'start_vote') {
    const parts = [`on ${r.scope ? scopeLabel(r.scope, frames) : r.scopeText}`, `${plural(r.perPerson, 'dot')} each`];
    if (r.perNote > 1) parts.push(`up to ${r.perNote} on a note`);
    if (r.anonymous) parts.push('anonymous');
    if (r.endsWithTimer) parts.push('ends with the timer');
    return parts.join(' · ');
  }
  if (r.results.length === 0) return 'Nobody voted.';
  const top = r.results[0];
  return `${totalText(r)} · first: ${top.title} (${plural(top.count, 'dot')})`;
}
