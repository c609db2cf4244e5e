// What generate-frontmatter said of an accepted AI draft, shown under the
// note in the editor (docs/web-client.md, "Frontmatter after a draft").
import type { Frontmatter } from './noteDraft';

const relation: Record<string, string> = { relates_to: 'relates to', depends_on: 'depends on', blocks: 'blocks', part_of: 'is part of', duplicates: 'duplicates' };

/** NoteHints shows what generate-frontmatter said of an accepted draft; it is not saved. */
export default function NoteHints({ hints }: { hints: Frontmatter }) {
  return (
    <aside className="note-hints" aria-label="AI notes about this note">
      <p className="muted">AI summary (not saved): {hints.description}</p>
      {hints.relationships.length > 0 && (
        <ul className="plain">
          {hints.relationships.map((r) => (
            <li key={r.noteId + r.type}>
              This note {relation[r.type] ?? r.type} “{r.title || r.noteId}”{r.reason ? ` — ${r.reason}` : ''}
            </li>
          ))}
        </ul>
      )}
    </aside>
  );
}
