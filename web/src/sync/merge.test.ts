import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import type { Connector, Frame, Note, TrackerItem } from '../api/types';
import { CONNECTOR_FIELDS, FRAME_FIELDS, ITEM_FIELDS, NOTE_FIELDS, joinLines, mergeConnector, mergeFrame, mergeItem, mergeNote, mergeText, splitLines } from './merge';

// The golden vectors the server's board/merge_test.go reads too.
interface Vector {
  name: string;
  kind: 'text' | 'note' | 'item' | 'connector' | 'frame';
  base: unknown;
  theirs: unknown;
  mine: unknown;
  want: unknown;
  overlap: boolean;
}
const vectors: Vector[] = JSON.parse(readFileSync(new URL('../../../testdata/merge/vectors.json', import.meta.url), 'utf8'));

type Obj = Record<string, unknown>;
const s = (v: unknown) => (typeof v === 'string' ? v : '');
const n = (v: unknown) => (typeof v === 'number' ? v : 0);
const extra = (r: Obj, own: readonly string[]) => Object.keys(r).filter((k) => !own.includes(k) && r[k] !== undefined).map((k) => [k, JSON.stringify(r[k])]);

/** goNote is a note as the Go test compares it: absent fields are zero values, extra fields in order. */
const goNote = (r: Obj) => ({
  id: s(r.id), title: s(r.title), content: s(r.content), x: n(r.x), y: n(r.y), w: n(r.w), h: n(r.h), color: s(r.color), type: s(r.type),
  updatedAt: s(r.updatedAt), version: n(r.version), deletedAt: r.deletedAt ?? null, extra: extra(r, NOTE_FIELDS),
});
const goItem = (r: Obj) => ({
  id: s(r.id), key: s(r.key), type: s(r.type), summary: s(r.summary), description: s(r.description), status: s(r.status),
  parentId: s(r.parentId), updatedAt: s(r.updatedAt), version: n(r.version), deletedAt: r.deletedAt ?? null, extra: extra(r, ITEM_FIELDS),
});
const goConnector = (r: Obj) => ({
  id: s(r.id), from: s(r.from), to: s(r.to), label: s(r.label), style: s(r.style), dash: s(r.dash), color: s(r.color),
  updatedAt: s(r.updatedAt), version: n(r.version), deletedAt: r.deletedAt ?? null, extra: extra(r, CONNECTOR_FIELDS),
});
const goFrame = (r: Obj) => ({
  id: s(r.id), title: s(r.title), x: n(r.x), y: n(r.y), w: n(r.w), h: n(r.h), color: s(r.color), locked: r.locked === true,
  updatedAt: s(r.updatedAt), version: n(r.version), deletedAt: r.deletedAt ?? null, extra: extra(r, FRAME_FIELDS),
});

describe('merge vectors (testdata/merge/vectors.json)', () => {
  it('has vectors of every kind', () => {
    expect(new Set(vectors.map((v) => v.kind))).toEqual(new Set(['text', 'note', 'item', 'connector', 'frame']));
  });
  for (const v of vectors) {
    it(v.name, () => {
      if (v.kind === 'text') {
        const got = mergeText(v.base as string, v.theirs as string, v.mine as string);
        expect(got).toEqual({ merged: v.want, overlap: v.overlap });
      } else if (v.kind === 'note') {
        const got = mergeNote(v.base as Note, v.theirs as Note, v.mine as Note);
        expect(goNote(got.merged)).toEqual(goNote(v.want as Obj));
        expect(got.overlap).toBe(v.overlap);
        // Merging mine again changes nothing.
        expect(goNote(mergeNote(v.base as Note, got.merged, v.mine as Note).merged)).toEqual(goNote(got.merged));
      } else if (v.kind === 'connector') {
        const got = mergeConnector(v.base as Connector, v.theirs as Connector, v.mine as Connector);
        expect(goConnector(got.merged)).toEqual(goConnector(v.want as Obj));
        expect('baseVersion' in got.merged).toBe(false);
        expect(got.overlap).toBe(v.overlap);
        expect(goConnector(mergeConnector(v.base as Connector, got.merged, v.mine as Connector).merged)).toEqual(goConnector(got.merged));
      } else if (v.kind === 'frame') {
        const got = mergeFrame(v.base as Frame, v.theirs as Frame, v.mine as Frame);
        expect(goFrame(got.merged)).toEqual(goFrame(v.want as Obj));
        expect('baseVersion' in got.merged).toBe(false);
        expect(got.overlap).toBe(v.overlap);
        expect(goFrame(mergeFrame(v.base as Frame, got.merged, v.mine as Frame).merged)).toEqual(goFrame(got.merged));
      } else {
        const got = mergeItem(v.base as TrackerItem, v.theirs as TrackerItem, v.mine as TrackerItem);
        expect(goItem(got.merged)).toEqual(goItem(v.want as Obj));
        expect(got.overlap).toBe(v.overlap);
      }
    });
  }
});

describe('mergeNote and mergeItem', () => {
  it('keeps extra fields in order: mine first, then theirs', () => {
    const base = { id: 'n', title: '', content: '', x: 0, y: 0, color: '', type: '', updatedAt: '', version: 1, a: 1 } as Note;
    const theirs = { ...base, version: 2, b: 2, a: 1 } as Note;
    const mine = { ...base, c: 3, a: 1 } as Note;
    delete mine.version;
    expect(Object.keys(mergeNote(base, theirs, mine).merged).filter((k) => !NOTE_FIELDS.includes(k))).toEqual(['a', 'c', 'b']);
  });

  it('leaves baseVersion out and takes theirs’ version and deletedAt, mine’s updatedAt', () => {
    const base = { id: 'n', title: 't', content: '', x: 0, y: 0, color: '', type: '', updatedAt: 'u1', version: 1, deletedAt: null } as Note;
    const got = mergeNote(base, { ...base, version: 4, updatedAt: 'u2' }, { ...base, baseVersion: 1, updatedAt: 'u3', version: undefined }).merged;
    expect(got.baseVersion).toBeUndefined();
    expect(got.version).toBe(4);
    expect(got.updatedAt).toBe('u3');
    expect(got.deletedAt).toBeNull();
  });

  it('leaves an empty optional item field out, as the server writes it', () => {
    const base: TrackerItem = { id: 'i', key: 'K-1', type: 'task', summary: 's', status: 'todo', updatedAt: '', version: 1 };
    const got = mergeItem(base, { ...base, version: 2, description: 'd' }, { ...base, status: '' }).merged;
    expect('status' in got).toBe(false);
    expect(got.description).toBe('d');
  });
});

describe('splitLines', () => {
  it('has one virtual final line break', () => {
    expect(splitLines('')).toEqual([]);
    expect(splitLines('a')).toEqual(['a\n']);
    expect(splitLines('a\nb')).toEqual(['a\n', 'b\n']);
    expect(splitLines('a\nb\n')).toEqual(['a\n', 'b\n', '\n']);
    expect(splitLines('\n')).toEqual(['\n', '\n']);
    expect(splitLines('a\r\n')).toEqual(['a\r\n', '\n']);
    for (const t of ['', 'a', '\n', 'a\n\nb\n', '😀\n']) expect(joinLines(splitLines(t))).toBe(t);
  });
});

/** rng is a small seeded generator (mulberry32), so a failure can be replayed. */
function rng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * checkMerge holds the properties every merge has (as board's checkMerge):
 * it keeps every line mine added, every line theirs added when nothing
 * overlapped, and merging the same edit again gives the same text.
 */
function checkMerge(base: string, theirs: string, mine: string) {
  const { merged, overlap } = mergeText(base, theirs, mine);
  const lines = (t: string) => new Set(t.split('\n'));
  const inBase = lines(base);
  const inGot = lines(merged);
  const sides = overlap ? [mine] : [mine, theirs];
  for (const side of sides) {
    for (const l of lines(side)) {
      if (!inBase.has(l) && !inGot.has(l)) throw new Error(`merge(${JSON.stringify([base, theirs, mine])}) = ${JSON.stringify(merged)} (overlap ${overlap}) lost the added line ${JSON.stringify(l)}`);
    }
  }
  const again = mergeText(base, merged, mine).merged;
  if (again !== merged) throw new Error(`merge(${JSON.stringify([base, theirs, mine])}) = ${JSON.stringify(merged)}, but merging mine again gives ${JSON.stringify(again)}`);
}

describe('mergeText properties', () => {
  it('keeps added lines and is idempotent on random small texts', () => {
    const words = ['a', 'b', 'c', '', '- [ ] x', '- [x] x', '😀', '\r'];
    const next = rng(20261126);
    const text = () => {
      const k = Math.floor(next() * 5);
      const t = Array.from({ length: k }, () => words[Math.floor(next() * words.length)]).join('\n');
      return next() < 0.3 ? t + '\n' : t;
    };
    /** edit changes a text a little: a line replaced, inserted or removed. */
    const edit = (t: string) => {
      const ls = t.split('\n');
      const i = Math.floor(next() * (ls.length + 1));
      const w = words[Math.floor(next() * words.length)];
      const r = next();
      if (r < 0.4) ls.splice(i, 0, w);
      else if (r < 0.7) ls.splice(i, 1);
      else ls[Math.min(i, ls.length - 1)] = w;
      return ls.join('\n');
    };
    for (let i = 0; i < 20000; i++) {
      const base = text();
      // Half the time theirs and mine are edits of base, half unrelated texts.
      const theirs = next() < 0.5 ? edit(base) : text();
      const mine = next() < 0.5 ? edit(next() < 0.5 ? base : edit(base)) : text();
      checkMerge(base, theirs, mine);
    }
  });

  it('holds for every small text of a small alphabet', () => {
    const words = ['a', 'b', ''];
    const texts: string[] = [];
    const build = (prefix: string[]) => {
      const t = prefix.join('\n');
      texts.push(t);
      if (prefix.length) texts.push(t + '\n');
      if (prefix.length === 3) return;
      for (const w of words) build([...prefix, w]);
    };
    build([]);
    for (const b of texts.slice(0, 20)) for (const t of texts) for (const m of texts.slice(0, 30)) checkMerge(b, t, m);
  });
});

describe('mergeText bounded work', () => {
  it('gives up on two unrelated 15,000-line texts and keeps mine, with overlap', () => {
    let base = '';
    let theirs = '';
    let mine = '';
    for (let i = 0; i < 15000; i++) {
      base += 'b\n';
      theirs += i % 2 === 0 ? 't\n' : 'b\n';
      mine += 'm\n';
    }
    // Its cost is bounded by MAX_DIFF_WORK and linear checks, not timed
    // here (a loaded machine would make a time limit flaky).
    const got = mergeText(base, theirs, mine);
    expect(got.merged === mine).toBe(true);
    expect(got.overlap).toBe(true);
  });
});
