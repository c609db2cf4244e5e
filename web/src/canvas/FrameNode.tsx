// FrameNode draws a frame (issue 24): a tinted, named area under the notes.
// It is dragged by its title bar (the rest of it pans the board, so a large
// frame never traps a finger), resized from its bottom-right corner, and
// renamed by a double-click on the title. Every intent goes to the Editor.
import { memo, useContext, useState } from 'react';
import type { Node, NodeProps } from '@xyflow/react';
import type { Frame } from '../api/types';
import { EditorContext } from '../editor/context';
import { NameField } from '../editor/NameField';
import { MAX_FRAME_TITLE, frameColor } from '../editor/structure';
import { ConnectHandles } from './NoteNode';
import { ResizeCorner } from './ResizeCorner';
import { LockIcon } from './LockIcon';

export type FrameNodeData = {
  frame: Frame;
  w: number;
  h: number;
  /** naming: the title is being typed. */
  naming: boolean;
  canEdit: boolean;
};
export type FrameFlowNode = Node<FrameNodeData, 'frame'>;

export const FrameNode = memo(function FrameNode({ data, selected }: NodeProps<FrameFlowNode>) {
  const f = data.frame;
  const editor = useContext(EditorContext);
  const [preview, setPreview] = useState<{ w: number; h: number } | null>(null);
  const c = frameColor(f.color);
  const w = preview?.w ?? data.w;
  const h = preview?.h ?? data.h;
  return (
    <section
      className={`frame${selected ? ' selected' : ''}${f.locked ? ' locked' : ''}`}
      style={{ width: w, height: h, background: c.fill, borderColor: c.line }}
      data-frame-id={f.id}
      // Reached by the arrow keys' roving focus (Editor.focusToward), not a tab stop of its own.
      tabIndex={-1}
      aria-label={`Frame: ${f.title || 'untitled'}${f.locked ? ' (locked)' : ''}${selected ? ' (selected)' : ''}`}
    >
      <header className="frame-head" style={{ color: c.line }} onDoubleClick={() => editor?.startNaming('frame', f.id)}>
        {data.naming ? (
          <NameField className="frame-name-field" label="Frame name" value={f.title} max={MAX_FRAME_TITLE} />
        ) : (
          <span className="frame-title">{f.title || 'Untitled frame'}</span>
        )}
        {f.locked && (
          <span className="frame-lock" title="Locked: it does not move or resize">
            <LockIcon label="Locked" className="frame-lock-icon" />
          </span>
        )}
      </header>
      {data.canEdit && <ConnectHandles />}
      {data.canEdit && !f.locked && (
        <ResizeCorner
          className="frame-resize"
          title="Drag to resize the frame"
          w={data.w}
          h={data.h}
          onSize={(w, h) => setPreview({ w: Math.max(40, w), h: Math.max(40, h) })}
          onEnd={(w, h) => {
            setPreview(null);
            editor?.resizeFrame(f.id, { x: f.x, y: f.y, w: Math.max(40, w), h: Math.max(40, h) });
          }}
          onCancel={() => setPreview(null)}
        />
      )}
    </section>
  );
});
