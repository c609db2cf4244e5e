import { createContext, memo, useContext, useSyncExternalStore } from 'react';
import type { NodeProps, Node } from '@xyflow/react';
import type { Note } from '../api/types';
import type { Mark } from '../sync/marks';
import type { PresenceStore } from '../sync/presence';
import { background, COLORS, NOTE_HEIGHT, NOTE_WIDTH, renderMarkdown } from './notes';
import { DetailContext } from './detail';
import { aiMarkOf } from './aiMark';
import { editingLabel, OVERLAP_NAME, REVIVED_NAME, type NoteMarks } from './peopleView';

export type NoteNodeData = {
  note: Note;
  /** marks: what merges did to my changes of this note (buttons to its History). */
  marks?: NoteMarks;
  onOpen: (id: string) => void;
  onFocusNote: (id: string, additive: boolean) => void;
  onMark: (m: Mark) => void;
};
export type NoteFlowNode = Node<NoteNodeData, 'note'>;

/**
 * PresenceContext hands the board's presence store to the notes: each
 * note's "is editing" label subscribes to it on its own, so someone
 * opening an editor re-renders that label, and a moving pointer nothing.
 */
export const PresenceContext = createContext<PresenceStore | null>(null);

const noSubscribe = () => () => {};
const nobody = () => undefined;

/** EditingTag shows, in a note's header, who else has its editor open, in their presence colour. */
function EditingTag({ noteId }: { noteId: string }) {
  const presence = useContext(PresenceContext);
  // The editors map is the same object until someone opens or closes an editor.
  const peers = useSyncExternalStore(presence ? presence.onChange : noSubscribe, presence ? () => presence.getSnapshot().editors.get(noteId) : nobody);
  const label = peers ? editingLabel(peers) : null;
  if (!label) return null;
  return (
    <span className="editing-tag" role="status" aria-label={label.full} title={label.full} style={{ borderColor: label.color }}>
      <span className="dot" aria-hidden="true" style={{ background: label.color }} />
      <span className="editing-text">{label.text}</span>
    </span>
  );
}

/** NoteNode draws one sticky note: colour, type, title and rendered Markdown. */
export const NoteNode = memo(function NoteNode({ data, selected }: NodeProps<NoteFlowNode>) {
  const n = data.note;
  // Far out only the colour shows (text would be unreadable and slow to paint).
  const detail = useContext(DetailContext);
  const ai = aiMarkOf(n);
  const label = `${n.type || 'note'}: ${n.title || 'untitled'}${ai ? (ai === 'created' ? ' (made by AI)' : ' (changed by AI)') : ''}${selected ? ' (selected)' : ''}`;
  const { overlap, revived } = data.marks ?? {};
  return (
      <article
        className={selected ? 'note selected' : 'note'}
        style={{ background: background(n.color), width: NOTE_WIDTH, height: NOTE_HEIGHT }}
        tabIndex={0}
        aria-label={label}
        data-note-id={n.id}
        onFocus={(e) => {
          // Keyboard focus selects; a click is xyflow's (Shift adds to the selection).
          if (!selected && e.currentTarget.matches(':focus-visible')) data.onFocusNote(n.id, false);
          e.stopPropagation();
        }}
        onDoubleClick={() => data.onOpen(n.id)}
      >
        {detail !== 'far' && (
          <header className="note-head">
            <span className="note-type">{n.type}</span>
            <EditingTag noteId={n.id} />
            {/* A colour from another client that this one does not draw: name it. */}
            {n.color && !Object.hasOwn(COLORS, n.color) && <span className="note-color">{n.color}</span>}
            {ai && (
              <span className="note-ai" title={ai === 'created' ? 'Made by the AI assistant' : 'Changed by the AI assistant'}>
                AI
              </span>
            )}
          </header>
        )}
        {detail !== 'far' && n.title && <h3 className="note-title">{n.title}</h3>}
        {detail === 'near' && <div className="note-body md" dangerouslySetInnerHTML={{ __html: renderMarkdown(n.content) }} />}
        {(overlap || revived) && (
          <div className="note-marks">
            {overlap && <MarkButton mark={overlap} name={OVERLAP_NAME} text="Changed by someone else" onMark={data.onMark} />}
            {revived && <MarkButton mark={revived} name={REVIVED_NAME} text="Brought back" onMark={data.onMark} />}
          </div>
        )}
      </article>
  );
});

/** MarkButton opens the note's History at the changelog entry of a mark (and the mark goes). */
function MarkButton({ mark, name, text, onMark }: { mark: Mark; name: string; text: string; onMark: (m: Mark) => void }) {
  return (
    <button
      type="button"
      // Not a drag, a pan or a click on the note: a button on it.
      className={`note-mark ${mark.kind} nodrag nopan`}
      aria-label={name}
      title={name}
      onClick={(e) => {
        e.stopPropagation();
        onMark(mark);
      }}
      onDoubleClick={(e) => e.stopPropagation()}
    >
      <span aria-hidden="true">{mark.kind === 'overlap' ? '⚠' : '↺'}</span> {text}
    </button>
  );
}
