import { memo, useContext } from 'react';
import type { NodeProps, Node } from '@xyflow/react';
import type { Note } from '../api/types';
import { background, COLORS, NOTE_HEIGHT, NOTE_WIDTH, renderMarkdown } from './notes';
import { DetailContext } from './detail';
import { aiMarkOf } from './aiMark';

export type NoteNodeData = { note: Note; onOpen: (id: string) => void; onFocusNote: (id: string, additive: boolean) => void };
export type NoteFlowNode = Node<NoteNodeData, 'note'>;

/** NoteNode draws one sticky note: colour, type, title and rendered Markdown. */
export const NoteNode = memo(function NoteNode({ data, selected }: NodeProps<NoteFlowNode>) {
  const n = data.note;
  // Far out only the colour shows (text would be unreadable and slow to paint).
  const detail = useContext(DetailContext);
  const ai = aiMarkOf(n);
  const label = `${n.type || 'note'}: ${n.title || 'untitled'}${ai ? (ai === 'created' ? ' (made by AI)' : ' (changed by AI)') : ''}${selected ? ' (selected)' : ''}`;
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
    </article>
  );
});
