// Slash commands in the note editor's content (docs/web-client.md, "Slash
// commands"). This module imports nothing: the editor reads slashQuery on
// every keystroke, and only once it finds a `/` at the start of a line does
// it load the command list and the AI code.

/** A `/word` being typed at the start of a line. */
export interface SlashQuery {
  /** start is the offset of the `/`. */
  start: number;
  /** end is the offset just past the typed word (the caret). */
  end: number;
  /** query is what follows the `/`, lower-cased. */
  query: string;
}

/**
 * slashQuery finds the command being typed: the caret's line, from its start
 * to the caret, is `/` followed by letters, digits and dashes only. Any other
 * text on the line before the caret (a space included) means no command.
 */
export function slashQuery(text: string, caret: number): SlashQuery | null {
  if (caret < 1 || caret > text.length) return null;
  const lineStart = text.lastIndexOf('\n', caret - 1) + 1;
  const typed = text.slice(lineStart, caret);
  if (!/^\/[A-Za-z0-9-]*$/.test(typed)) return null;
  return { start: lineStart, end: caret, query: typed.slice(1).toLowerCase() };
}

/** A command as the menu lists it. */
export interface CommandInfo {
  command: string;
  label: string;
  description: string;
}

/**
 * filterCommands keeps the commands the query matches: a prefix of the
 * command ("gen", "generate-p") or of the part after "generate-" ("prd",
 * "qa"), or a word of the label. Prefix matches of the command come first,
 * in the list's order.
 */
export function filterCommands<C extends CommandInfo>(query: string, commands: readonly C[]): C[] {
  const q = query.toLowerCase();
  if (!q) return [...commands];
  const first: C[] = [];
  const then: C[] = [];
  for (const c of commands) {
    if (c.command.startsWith(q)) first.push(c);
    else if (c.command.replace(/^generate-/, '').startsWith(q) || c.label.toLowerCase().split(/\s+/).some((w) => w.startsWith(q))) then.push(c);
  }
  return [...first, ...then];
}

/** removeSlash takes the typed `/word` out of text; the caret goes where it began. */
export function removeSlash(text: string, q: SlashQuery): { text: string; caret: number } {
  let end = q.end;
  // A line that held only the command goes away with its line break.
  const lineEnds = end === text.length || text[end] === '\n';
  if (lineEnds && text[end] === '\n' && (q.start === 0 || text[q.start - 1] === '\n')) end++;
  return { text: text.slice(0, q.start) + text.slice(end), caret: q.start };
}
