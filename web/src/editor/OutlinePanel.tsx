// OutlinePanel lists the board's frames and the notes each holds (issue 24,
// structure.ts's outline): a frame's button zooms to it, a note's jumps to
// it. The notes in no frame come last.
import { useMemo } from 'react';
import type { Frame, Note } from '../api/types';
import { Dialog } from '../app/Dialog';
import { outline } from './structure';

/** OUTLINE_NOTES bounds the notes listed per group (a board of thousands stays a short list). */
const OUTLINE_NOTES = 100;

interface Props {
  frames: ReadonlyMap<string, Frame>;
  notes: ReadonlyMap<string, Note>;
  onFrame: (id: string) => void;
  onNote: (id: string) => void;
  onClose: () => void;
}

export function OutlinePanel({ frames, notes, onFrame, onNote, onClose }: Props) {
  const entries = useMemo(() => outline(frames.values(), notes.values()), [frames, notes]);
  const list = (ns: Note[]) => (
    <ul className="plain outline-notes">
      {ns.slice(0, OUTLINE_NOTES).map((n) => (
        <li key={n.id}>
          <button type="button" className="link" onClick={() => onNote(n.id)}>
            {n.title || 'Untitled note'}
          </button>
        </li>
      ))}
      {ns.length > OUTLINE_NOTES && <li className="muted">and {ns.length - OUTLINE_NOTES} more</li>}
    </ul>
  );
  return (
    <Dialog title="Outline" onClose={onClose}>
      <div className="outline-panel">
        {frames.size === 0 && <p className="muted">No frames yet: select some notes and press F (or Frame in the tools) to make one.</p>}
        <ul className="plain outline-frames">
          {entries.map((e) =>
            e.frame ? (
              <li key={e.frame.id}>
                <button type="button" className="outline-frame" onClick={() => onFrame(e.frame!.id)} aria-label={`Zoom to frame ${e.frame.title || 'untitled'}`}>
                  {e.frame.title || 'Untitled frame'} <span className="muted">({e.notes.length} note{e.notes.length === 1 ? '' : 's'})</span>
                </button>
                {list(e.notes)}
              </li>
            ) : (
              e.notes.length > 0 && (
                <li key="loose">
                  <h3 className="outline-loose">Not in a frame</h3>
                  {list(e.notes)}
                </li>
              )
            ),
          )}
        </ul>
      </div>
    </Dialog>
  );
}
