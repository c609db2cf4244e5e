// The three-way merge of a note or a tracker item: a port of the server's
// board/merge.go, line for line, so that the browser and the server always
// agree on what a merge gives (testdata/merge/vectors.json holds the golden
// vectors both test suites read). Pure functions: no state, no I/O.
//
// base is the server copy an edit started from, theirs the row as committed
// since, mine the edit. docs/sync.md ("How a push is merged") and
// docs/web-client.md ("The merge rule") say how the sync engine uses it.
import type { Connector, Frame, Note, TrackerItem } from '../api/types';

/** MergeResult is a merged value and whether both sides changed the same lines of a text. */
export interface MergeResult<T> {
  merged: T;
  /** overlap: some of theirs was overwritten by mine (the server keeps it in the changelog). */
  overlap: boolean;
}

/**
 * MAX_DIFF_WORK bounds the work of one line diff (steps of Myers' algorithm,
 * diagonals tried plus lines matched along them), as board.MaxDiffWork does:
 * past it the lines between the common start and end count as all changed.
 */
export const MAX_DIFF_WORK = 1_000_000;

/** NOTE_FIELDS are a note's own fields (board.NoteFields); any other key is an extra field. */
export const NOTE_FIELDS: readonly string[] = ['id', 'title', 'content', 'x', 'y', 'w', 'h', 'color', 'type', 'updatedAt', 'version', 'deletedAt', 'baseVersion', 'locked', 'createdBy'];

/** ITEM_FIELDS are a tracker item's own fields (board.ItemFields). */
export const ITEM_FIELDS: readonly string[] = ['id', 'key', 'type', 'summary', 'description', 'status', 'parentId', 'updatedAt', 'version', 'deletedAt', 'baseVersion'];

/** CONNECTOR_FIELDS are a connector's own fields. */
export const CONNECTOR_FIELDS: readonly string[] = ['id', 'from', 'to', 'label', 'style', 'dash', 'color', 'updatedAt', 'version', 'deletedAt', 'baseVersion'];

/** FRAME_FIELDS are a frame's own fields. */
export const FRAME_FIELDS: readonly string[] = ['id', 'title', 'x', 'y', 'w', 'h', 'color', 'locked', 'updatedAt', 'version', 'deletedAt', 'baseVersion'];

type Obj = Record<string, unknown>;

/**
 * mergeNote merges mine, an edit of base, into theirs (board.MergeNote): a
 * field mine did not change keeps theirs; x and y move together, and w
 * and h as one size apart from them (a move and a resize both survive); color,
 * type and each extra field are one value each, mine winning when both
 * changed one; title and content merge line by line (mergeText). The id,
 * version and deletedAt of the result are theirs, updatedAt is mine, and
 * baseVersion is dropped.
 */
export function mergeNote(base: Note, theirs: Note, mine: Note): MergeResult<Note> {
  const out = ownFields(theirs, NOTE_FIELDS) as Note;
  out.updatedAt = mine.updatedAt;
  if (num(mine.x) !== num(base.x) || num(mine.y) !== num(base.y)) {
    out.x = mine.x;
    out.y = mine.y;
  }
  // An absent size is 0 on the server (board.Note's W and H), and stays
  // absent here.
  if (num(mine.w) !== num(base.w) || num(mine.h) !== num(base.h)) {
    setSize(out, mine.w, mine.h);
  }
  out.color = mergeValue(str(base.color), str(theirs.color), str(mine.color));
  out.type = mergeValue(str(base.type), str(theirs.type), str(mine.type));
  const t = mergeText(str(base.title), str(theirs.title), str(mine.title));
  const c = mergeText(str(base.content), str(theirs.content), str(mine.content));
  out.title = t.merged;
  out.content = c.merged;
  mergeExtra(out, base, theirs, mine, NOTE_FIELDS);
  // createdBy stays theirs (the server's); locked is one value, absent when false.
  if (mergeValue(!!base.locked, !!theirs.locked, !!mine.locked)) out.locked = true;
  else delete out.locked;
  return { merged: out, overlap: t.overlap || c.overlap };
}

/**
 * mergeItem merges a tracker item the way mergeNote merges a note
 * (board.MergeItem): key, type, status, parentId and each extra field are
 * one value each; summary and description merge line by line. An absent
 * description, status or parentId is "", as on the server, and an empty
 * one is left out of the result, as the server writes it.
 */
export function mergeItem(base: TrackerItem, theirs: TrackerItem, mine: TrackerItem): MergeResult<TrackerItem> {
  const out = ownFields(theirs, ITEM_FIELDS) as TrackerItem;
  out.updatedAt = mine.updatedAt;
  out.key = mergeValue(str(base.key), str(theirs.key), str(mine.key));
  out.type = mergeValue(str(base.type), str(theirs.type), str(mine.type));
  setOptional(out, 'status', mergeValue(str(base.status), str(theirs.status), str(mine.status)));
  setOptional(out, 'parentId', mergeValue(str(base.parentId), str(theirs.parentId), str(mine.parentId)));
  const s = mergeText(str(base.summary), str(theirs.summary), str(mine.summary));
  const d = mergeText(str(base.description), str(theirs.description), str(mine.description));
  out.summary = s.merged;
  setOptional(out, 'description', d.merged);
  mergeExtra(out, base, theirs, mine, ITEM_FIELDS);
  return { merged: out, overlap: s.overlap || d.overlap };
}

/**
 * mergeConnector merges a connector (board.MergeConnector): from and to
 * move together as one value (a reconnection); label, style, dash, color
 * and each extra field are one value each, mine winning when both changed
 * one. It never overlaps.
 */
export function mergeConnector(base: Connector, theirs: Connector, mine: Connector): MergeResult<Connector> {
  const out = ownFields(theirs, CONNECTOR_FIELDS) as Connector;
  out.updatedAt = mine.updatedAt;
  if (str(mine.from) !== str(base.from) || str(mine.to) !== str(base.to)) {
    out.from = mine.from;
    out.to = mine.to;
  }
  for (const k of ['label', 'style', 'dash', 'color'] as const) out[k] = mergeValue(str(base[k]), str(theirs[k]), str(mine[k]));
  mergeExtra(out, base, theirs, mine, CONNECTOR_FIELDS);
  return { merged: out, overlap: false };
}

/**
 * mergeFrame merges a frame (board.MergeFrame) as mergeNote does a note's geometry: x and y
 * move together, w and h are one size; title, color, locked and each extra
 * field are one value each, mine winning when both changed one.
 */
export function mergeFrame(base: Frame, theirs: Frame, mine: Frame): MergeResult<Frame> {
  const out = ownFields(theirs, FRAME_FIELDS) as Frame;
  out.updatedAt = mine.updatedAt;
  if (num(mine.x) !== num(base.x) || num(mine.y) !== num(base.y)) {
    out.x = mine.x;
    out.y = mine.y;
  }
  if (num(mine.w) !== num(base.w) || num(mine.h) !== num(base.h)) {
    out.w = mine.w;
    out.h = mine.h;
  }
  out.title = mergeValue(str(base.title), str(theirs.title), str(mine.title));
  out.color = mergeValue(str(base.color), str(theirs.color), str(mine.color));
  out.locked = mergeValue(!!base.locked, !!theirs.locked, !!mine.locked);
  mergeExtra(out, base, theirs, mine, FRAME_FIELDS);
  return { merged: out, overlap: false };
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const num = (v: unknown): number => (typeof v === 'number' ? v : 0);

function setSize(out: Note, w: unknown, h: unknown) {
  if (num(w) === 0 && num(h) === 0) {
    delete out.w;
    delete out.h;
    return;
  }
  out.w = num(w);
  out.h = num(h);
}

function setOptional(out: TrackerItem, k: 'status' | 'parentId' | 'description', v: string) {
  if (v === '') delete out[k];
  else out[k] = v;
}

/** ownFields copies row's own fields (without baseVersion) into a new object. */
function ownFields(row: Obj, own: readonly string[]): Obj {
  const out: Obj = {};
  for (const k of own) if (k !== 'baseVersion' && row[k] !== undefined) out[k] = row[k];
  return out;
}

/** mergeValue is the rule for a field that is one value: mine when mine changed it, else theirs. */
function mergeValue<T>(base: T, theirs: T, mine: T): T {
  return mine !== base ? mine : theirs;
}

/**
 * mergeExtra merges the extra fields (keys that are not own fields) one by
 * one, each as one value compared by its compact JSON, into out: a field
 * absent on a side is that side's value too. Mine's fields come first in
 * mine's order, then theirs' other fields in theirs' order (board's
 * mergeExtra).
 */
function mergeExtra(out: Obj, base: Obj, theirs: Obj, mine: Obj, own: readonly string[]) {
  const extra = (row: Obj) => Object.keys(row).filter((k) => !own.includes(k) && row[k] !== undefined);
  const json = (row: Obj, k: string): string | undefined => (Object.hasOwn(row, k) && row[k] !== undefined ? JSON.stringify(row[k]) : undefined);
  const take = (k: string) => {
    const m = json(mine, k);
    const v = m === json(base, k) ? theirs : mine;
    if (json(v, k) !== undefined) out[k] = v[k];
  };
  const mineKeys = extra(mine);
  mineKeys.forEach(take);
  for (const k of extra(theirs)) if (!mineKeys.includes(k)) take(k);
}

/**
 * mergeText merges mine, an edit of base, into theirs line by line
 * (board.MergeText, diff3). Changes to different lines both survive; where
 * both sides changed the same stretch and it has as many lines on all three
 * sides, each changed in place (inPlace), lines merge one by one; otherwise mine wins the stretch and
 * overlap is true. Two insertions at one place are both kept, theirs first
 * (one already holding the other is taken alone). Lines are compared whole,
 * line break included. The result is idempotent: a result that merging mine
 * again would change is not taken, and mine wins the whole text instead
 * (overlap true).
 */
export function mergeText(base: string, theirs: string, mine: string): MergeResult<string> {
  const r = diff3(base, theirs, mine);
  if (r.merged === theirs || r.merged === mine) return r;
  if (diff3(base, r.merged, mine).merged !== r.merged) return { merged: mine, overlap: true };
  return r;
}

/** diff3 is the three-way merge of mergeText without its idempotence check. */
function diff3(base: string, theirs: string, mine: string): MergeResult<string> {
  if (theirs === base || mine === theirs) return { merged: mine, overlap: false };
  if (mine === base) return { merged: theirs, overlap: false };
  const b = splitLines(base);
  const t = splitLines(theirs);
  const m = splitLines(mine);
  const mt = matchLines(b, t);
  const mm = matchLines(b, m);

  const out: string[] = [];
  let overlap = false;
  let i = 0;
  let ti = 0;
  let mi = 0;
  for (;;) {
    // The next base line kept by both sides ends the unstable stretch.
    let j = i;
    while (j < b.length && (mt[j] < 0 || mm[j] < 0)) j++;
    let tEnd = t.length;
    let mEnd = m.length;
    if (j < b.length) {
      tEnd = mt[j];
      mEnd = mm[j];
    }
    const [lines, o] = mergeChunk(b.slice(i, j), t.slice(ti, tEnd), m.slice(mi, mEnd));
    for (const l of lines) out.push(l);
    overlap = overlap || o;
    if (j === b.length) break;
    out.push(b[j]);
    i = j + 1;
    ti = mt[j] + 1;
    mi = mm[j] + 1;
  }
  return { merged: joinLines(out), overlap };
}

/**
 * inPlace reports whether s, a stretch as long as b, changed b's lines in
 * place: no line of s that differs from b's line at its place is one of
 * b's other lines (that line moved; merging by place would show it twice).
 */
function inPlace(b: string[], s: string[]): boolean {
  // A set, not b.includes: two long texts changed everywhere would cost
  // the square of their length.
  let lines: Set<string> | null = null;
  for (let k = 0; k < s.length; k++) {
    if (s[k] === b[k]) continue;
    lines ??= new Set(b);
    if (lines.has(s[k])) return false;
  }
  return true;
}

/** mergeChunk resolves one unstable stretch: base lines b that theirs replaced with t and mine with m. */
function mergeChunk(b: string[], t: string[], m: string[]): [string[], boolean] {
  if (equalLines(t, b)) return [m, false];
  if (equalLines(m, b) || equalLines(t, m)) return [t, false];
  if (b.length === 0) {
    // Both inserted at the same place: keep both, unless one holds the other already.
    if (containsRun(t, m)) return [t, false];
    if (containsRun(m, t)) return [m, false];
    // Theirs, then mine's lines that theirs does not already hold (an edit
    // pushed again on an older base carries lines theirs has).
    const have = new Map<string, number>();
    for (const l of t) have.set(l, (have.get(l) ?? 0) + 1);
    const out = [...t];
    for (const l of m) {
      const n = have.get(l) ?? 0;
      if (n > 0) have.set(l, n - 1);
      else out.push(l);
    }
    return [out, false];
  }
  if (t.length === b.length && m.length === b.length && inPlace(b, t) && inPlace(b, m)) {
    const out: string[] = new Array(b.length);
    let overlap = false;
    for (let k = 0; k < b.length; k++) {
      if (m[k] === b[k]) out[k] = t[k];
      else if (t[k] === b[k] || t[k] === m[k]) out[k] = m[k];
      else {
        out[k] = m[k];
        overlap = true;
      }
    }
    return [out, overlap];
  }
  return [m, true];
}

function equalLines(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** containsRun reports whether sub appears in s as consecutive lines. */
function containsRun(s: readonly string[], sub: readonly string[]): boolean {
  for (let i = 0; i + sub.length <= s.length; i++) {
    let ok = true;
    for (let k = 0; k < sub.length; k++) {
      if (s[i + k] !== sub[k]) {
        ok = false;
        break;
      }
    }
    if (ok) return true;
  }
  return false;
}

/**
 * splitLines cuts s into lines that each end with "\n", as if s had one more
 * "\n" at its end: "a\nb" is ["a\n", "b\n"] and "a\nb\n" is ["a\n", "b\n",
 * "\n"]; "" has no lines. Lines are whole strings (never split inside a
 * surrogate pair: "\n" is one UTF-16 unit and one UTF-8 byte alike).
 */
export function splitLines(s: string): string[] {
  if (s === '') return [];
  const full = s + '\n';
  const lines: string[] = [];
  let start = 0;
  for (;;) {
    const nl = full.indexOf('\n', start);
    if (nl < 0) break;
    lines.push(full.slice(start, nl + 1));
    start = nl + 1;
  }
  return lines;
}

/** joinLines is the inverse of splitLines. */
export function joinLines(lines: readonly string[]): string {
  const s = lines.join('');
  return s.endsWith('\n') ? s.slice(0, -1) : s;
}

/**
 * matchLines returns, for every line of a, the index of the line of b it is
 * matched with in a shortest edit script (Myers), or -1 for a line b does
 * not keep. The search runs from the ends of a and b, so a line that could
 * match one of several equal lines is matched with the last.
 */
export function matchLines(a: readonly string[], b: readonly string[]): number[] {
  const ra = [...a].reverse();
  const rb = [...b].reverse();
  const rm = matchFromStart(ra, rb);
  const match = new Array<number>(a.length);
  for (let i = 0; i < rm.length; i++) {
    let j = rm[i];
    if (j >= 0) j = b.length - 1 - j;
    match[a.length - 1 - i] = j;
  }
  return match;
}

/** matchFromStart is matchLines without the reversal: equal lines match as early as they can. */
function matchFromStart(a: readonly string[], b: readonly string[]): number[] {
  const match = new Array<number>(a.length).fill(-1);
  let pre = 0;
  while (pre < a.length && pre < b.length && a[pre] === b[pre]) {
    match[pre] = pre;
    pre++;
  }
  const x0 = pre;
  const n = a.length - pre;
  const y0 = pre;
  const m = b.length - pre;
  if (n === 0 || m === 0) return match;

  // v[k+off] is the furthest x on diagonal k; trace[d] keeps v's diagonals
  // -d..d after step d for the walk back.
  const off = n + m + 1;
  const v = new Int32Array(2 * off + 1);
  const trace: Int32Array[] = [];
  let work = 0;
  let found = false;
  for (let d = 0; d <= n + m && !found; d++) {
    for (let k = -d; k <= d; k += 2) {
      let x: number;
      if (k === -d || (k !== d && v[k - 1 + off] < v[k + 1 + off])) x = v[k + 1 + off];
      else x = v[k - 1 + off] + 1;
      let y = x - k;
      while (x < n && y < m && a[x0 + x] === b[y0 + y]) {
        x++;
        y++;
        work++;
      }
      v[k + off] = x;
      work++;
      if (x >= n && y >= m) {
        found = true;
        break;
      }
    }
    trace.push(v.slice(off - d, off + d + 1));
    if (!found && work > MAX_DIFF_WORK) return match;
  }

  // Walk back from (n, m), matching the lines along each snake.
  let x = n;
  let y = m;
  for (let d = trace.length - 1; d > 0; d--) {
    const prev = trace[d - 1]; // diagonals -(d-1)..d-1 at index k+d-1
    const k = x - y;
    let pk: number;
    if (k === -d || (k !== d && prev[k - 1 + d - 1] < prev[k + 1 + d - 1])) pk = k + 1;
    else pk = k - 1;
    const px = prev[pk + d - 1];
    const py = px - pk;
    // The snake after the edit step: from the edit's end to (x, y).
    const sx = pk === k - 1 ? px + 1 : px;
    while (x > sx && y > sx - k) {
      x--;
      y--;
      match[x0 + x] = y0 + y;
    }
    x = px;
    y = py;
  }
  while (x > 0 && y > 0) {
    x--;
    y--;
    match[x0 + x] = y0 + y;
  }
  return match;
}

/** Row is a note, a tracker item, a connector or a frame. */
export type Row = Note | TrackerItem | Connector | Frame;

/** Kind names a row's kind. */
export type Kind = 'note' | 'item' | 'connector' | 'frame';

/** mergeRow merges a row by its kind. */
export function mergeRow(kind: Kind, base: Row, theirs: Row, mine: Row): MergeResult<Row> {
  switch (kind) {
    case 'note':
      return mergeNote(base as Note, theirs as Note, mine as Note);
    case 'item':
      return mergeItem(base as TrackerItem, theirs as TrackerItem, mine as TrackerItem);
    case 'connector':
      return mergeConnector(base as Connector, theirs as Connector, mine as Connector);
    case 'frame':
      return mergeFrame(base as Frame, theirs as Frame, mine as Frame);
  }
}
