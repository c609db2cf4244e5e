// The subagent's suggestion block (docs/ai.md, "Subagent suggestion
// block"): the last ```json fenced block of the message's text holds
// exactly three {label, prompt} suggestions. The chat shows them as buttons
// and hides the block itself.

export interface Suggestion {
  label: string;
  prompt: string;
}

const OPEN = /```json[ \t]*\n/gi;

/** lastJsonFence finds the last ```json fence: where it starts, its body, and whether it is closed. */
function lastJsonFence(text: string): { start: number; body: string; closed: boolean; end: number } | null {
  let start = -1;
  let bodyAt = 0;
  for (const m of text.matchAll(OPEN)) {
    start = m.index!;
    bodyAt = m.index! + m[0].length;
  }
  if (start < 0) return null;
  const close = text.indexOf('```', bodyAt);
  if (close < 0) return { start, body: text.slice(bodyAt), closed: false, end: text.length };
  return { start, body: text.slice(bodyAt, close), closed: true, end: close + 3 };
}

function isSuggestion(v: unknown): v is Suggestion {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return false;
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o);
  return keys.length === 2 && typeof o.label === 'string' && o.label.trim() !== '' && typeof o.prompt === 'string' && o.prompt.trim() !== '';
}

/** parseSuggestions reads the three suggestions of the last ```json block, or null. */
export function parseSuggestions(text: string): Suggestion[] | null {
  const f = lastJsonFence(text);
  if (!f || !f.closed) return null;
  let v: unknown;
  try {
    v = JSON.parse(f.body);
  } catch {
    return null;
  }
  if (!v || typeof v !== 'object' || Array.isArray(v)) return null;
  const o = v as Record<string, unknown>;
  if (Object.keys(o).length !== 1 || !Array.isArray(o.suggestions) || o.suggestions.length !== 3 || !o.suggestions.every(isSuggestion)) return null;
  return o.suggestions.map((s: Suggestion) => ({ label: s.label, prompt: s.prompt }));
}

/**
 * withoutSuggestionBlock is the text to show: without the last ```json
 * block when it holds the suggestions, and, while the answer still
 * streams, without a ```json block that has not closed yet (it is the
 * suggestions arriving, which would flash by as raw JSON).
 */
export function withoutSuggestionBlock(text: string, streaming: boolean): string {
  const f = lastJsonFence(text);
  if (!f) return text;
  if ((f.closed && parseSuggestions(text)) || (!f.closed && streaming)) return (text.slice(0, f.start) + text.slice(f.end)).trimEnd();
  return text;
}
