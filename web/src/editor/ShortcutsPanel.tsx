import { Dialog } from '../app/Dialog';
import { KEYMAP, type Binding } from './keymap';

const GROUPS: { context: Binding['context']; title: string }[] = [
  { context: 'board', title: 'On the board' },
  { context: 'editing', title: 'Editing a note in place' },
];

/**
 * ShortcutsPanel lists every key binding, straight from the editor's
 * keymap (the table the key handler matches), so it cannot drift.
 */
export function ShortcutsPanel({ onClose, canEdit }: { onClose: () => void; canEdit: boolean }) {
  return (
    <Dialog title="Keyboard shortcuts" onClose={onClose}>
      {GROUPS.map((g) => (
        <section key={g.context} className="shortcuts">
          <h3>{g.title}</h3>
          <table>
            <tbody>
              {KEYMAP.filter((b) => b.context === g.context && (canEdit || !b.edits)).map((b) => (
                <tr key={b.action}>
                  <th scope="row">
                    {b.keys.map((k, i) => (
                      <span key={k}>
                        {i > 0 && ' or '}
                        {/^[a-z]/.test(k) ? k : <kbd>{k}</kbd>}
                      </span>
                    ))}
                  </th>
                  <td>{b.label}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      ))}
      <section className="shortcuts">
        <h3>Touch</h3>
        <ul className="plain">
          <li>Tap a note to select it; double-tap to edit it in place.</li>
          <li>Drag a note to move it; drag its corner to resize it.</li>
          <li>Drag the canvas to pan; pinch to zoom.</li>
        </ul>
      </section>
    </Dialog>
  );
}
