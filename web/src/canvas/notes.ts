// Note vocabulary shared by the canvas and the editor. The sets are this
// client's; values other clients wrote are shown as they are and kept.
import MarkdownIt from 'markdown-it';
import type { Note } from '../api/types';

/** COLORS is the documented colour set: name → background. */
export const COLORS: Record<string, string> = {
  yellow: '#fff3a3',
  orange: '#ffd8a8',
  pink: '#ffc9de',
  purple: '#e0d4ff',
  blue: '#c9e4ff',
  green: '#cdf0c5',
  gray: '#e5e7eb',
};

/** TYPES is the documented note type set. */
export const TYPES = ['sticky', 'idea', 'task', 'question', 'decision', 'risk'] as const;

export const NOTE_WIDTH = 220;
export const NOTE_HEIGHT = 160;

/** MAX_CONTENT is the server's limit on content, in code points. */
export const MAX_CONTENT = 30_000;
export const MAX_TITLE = 1000;

/** codePoints counts Unicode code points, as the server does. */
export function codePoints(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/** background is a note's colour: a known name, else neutral. */
export function background(color: string): string {
  return COLORS[color] ?? '#f3f4f6';
}

// html: false escapes raw HTML; markdown-it's validateLink refuses
// javascript:, vbscript:, file: and non-image data: links.
const md = new MarkdownIt({ html: false, linkify: true, breaks: false });
const defaultLinkOpen = md.renderer.rules.link_open ?? ((t, i, o, _e, self) => self.renderToken(t, i, o));
md.renderer.rules.link_open = (tokens, idx, opts, env, self) => {
  tokens[idx].attrSet('target', '_blank');
  tokens[idx].attrSet('rel', 'noopener noreferrer nofollow');
  return defaultLinkOpen(tokens, idx, opts, env, self);
};

const cache = new Map<string, string>();

/** renderMarkdown turns note content into safe HTML (memoised: boards repeat renders). */
export function renderMarkdown(src: string): string {
  let html = cache.get(src);
  if (html === undefined) {
    html = md.render(src);
    if (cache.size > 5000) cache.clear();
    cache.set(src, html);
  }
  return html;
}

/** newNote is a blank note at (x, y) (top-left corner, board coordinates). */
export function newNote(id: string, x: number, y: number): Note {
  return { id, title: '', content: '', x: Math.round(x), y: Math.round(y), color: 'yellow', type: 'sticky', updatedAt: '' };
}
