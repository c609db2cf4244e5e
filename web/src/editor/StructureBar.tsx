// StructureBar is the toolbar of the one connector or frame selected
// (issue 24): relabel and restyle a connector, rename, colour, lock and
// zoom to a frame, delete either. Real buttons, so every action is
// reachable by keyboard and touch and named for screen readers.
import { useContext } from 'react';
import type { Connector, Frame } from '../api/types';
import { EditorContext } from './context';
import { CONNECTOR_COLORS, FRAME_COLORS, isDashed, isLine } from './structure';
import { LOCKED_REASON } from './Editor';
import { LockIcon } from '../canvas/LockIcon';

/**
 * canEdit: the person may change frames and connectors (not a viewer, not
 * a "can add notes" invitee); isOwner: locks are theirs (docs/api.md,
 * "Locks and roles"): only the owner sees Lock/Unlock, and a locked frame
 * is the owner's to rename, colour or delete.
 */
export function StructureBar({ connector, frame, canEdit, isOwner = true }: { connector?: Connector; frame?: Frame; canEdit: boolean; isOwner?: boolean }) {
  const editor = useContext(EditorContext);
  if (!editor || (!connector && !frame)) return null;
  if (connector) {
    const c = connector;
    return (
      <div className="structure-bar" role="toolbar" aria-label="Connector">
        <span className="structure-what">Connector</span>
        {canEdit && (
          <>
            <button type="button" onClick={() => editor.startNaming('connector', c.id)} aria-keyshortcuts="Enter">
              {c.label ? 'Rename label' : 'Add label'}
            </button>
            <button type="button" aria-pressed={!isLine(c)} onClick={() => editor.setConnector(c.id, { style: isLine(c) ? 'arrow' : 'line' })}>
              Arrow
            </button>
            <button type="button" aria-pressed={isDashed(c)} onClick={() => editor.setConnector(c.id, { dash: isDashed(c) ? 'solid' : 'dashed' })}>
              Dashed
            </button>
            <ColourSelect colours={CONNECTOR_COLORS} value={c.color} onChange={(color) => editor.setConnector(c.id, { color })} />
            <button type="button" className="danger" onClick={() => editor.deleteSelected()} aria-keyshortcuts="Delete">
              Delete
            </button>
          </>
        )}
      </div>
    );
  }
  const f = frame!;
  const lockedOut = f.locked && !isOwner;
  canEdit = canEdit && !lockedOut;
  return (
    <div className="structure-bar" role="toolbar" aria-label={`Frame ${f.title}`}>
      <span className="structure-what">Frame</span>
      {lockedOut && (
        <span className="structure-reason" role="status">
          <LockIcon label={null} className="reason-lock" />{' '}
          {LOCKED_REASON}
        </span>
      )}
      {canEdit && (
        <button type="button" onClick={() => editor.startNaming('frame', f.id)} aria-keyshortcuts="Enter">
          Rename
        </button>
      )}
      {canEdit && (
        <ColourSelect colours={FRAME_COLORS} value={f.color} onChange={(color) => editor.setFrame(f.id, { color })} />
      )}
      {canEdit && isOwner && (
        <button type="button" aria-pressed={f.locked} onClick={() => editor.setFrame(f.id, { locked: !f.locked })}>
          {f.locked ? 'Unlock' : 'Lock'}
        </button>
      )}
      <button type="button" onClick={() => editor.zoomToFrame(f.id)}>
        Zoom to frame
      </button>
      {canEdit && (
        <button type="button" className="danger" onClick={() => editor.deleteSelected()} aria-keyshortcuts="Delete">
          Delete
        </button>
      )}
    </div>
  );
}

/** ColourSelect picks one of colours by name; a colour it does not know (another client's) shows as it is until changed. */
function ColourSelect({ colours, value, onChange }: { colours: object; value: string; onChange: (color: string) => void }) {
  const known = Object.hasOwn(colours, value);
  return (
    <label className="structure-colour">
      <span>Colour</span>
      <select value={known ? value : ''} onChange={(e) => onChange(e.target.value)}>
        {!known && <option value="">{value || 'none'}</option>}
        {Object.keys(colours).map((k) => (
          <option key={k} value={k}>
            {k}
          </option>
        ))}
      </select>
    </label>
  );
}
