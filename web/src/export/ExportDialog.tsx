import { useId, useState } from 'react';
import { Dialog, FormActions } from '../app/Dialog';
import './export.css';
import { canvasDownloadUrl } from '../api/api';
import type { Picture, Scheme, Scope } from './picture';
import { download, exportFile, fileName, type Format } from './render';

type Kind = Format | 'canvas';
const FORMATS: { kind: Kind; label: string }[] = [
  { kind: 'png', label: 'PNG image' },
  { kind: 'svg', label: 'SVG image' },
  { kind: 'pdf', label: 'PDF document' },
  { kind: 'canvas', label: 'JSON Canvas (.canvas, Obsidian Canvas)' },
];

/**
 * ExportDialog saves the board, the selection or one frame as PNG, SVG or
 * PDF (drawn here, in the browser, light or dark), or the board as a JSON
 * Canvas file (the server's). Loaded lazily: none of this is in the board's
 * first chunk.
 */
export default function ExportDialog({ boardId, boardName, picture, selected, scheme, onClose }: { boardId: string; boardName: string; picture: () => Picture; selected: ReadonlySet<string>; scheme: Scheme; onClose: () => void }) {
  const p = picture();
  const frames = [...p.frames].sort((a, b) => a.title.localeCompare(b.title));
  const [kind, setKind] = useState<Kind>('png');
  const [what, setWhat] = useState<string>('board');
  const [colours, setColours] = useState<Scheme>(scheme);
  const [perFrame, setPerFrame] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  const ids = useId();
  const canvas = kind === 'canvas';

  async function run() {
    setError('');
    if (canvas) {
      const a = document.createElement('a');
      a.href = canvasDownloadUrl(boardId);
      a.download = '';
      a.click();
      onClose();
      return;
    }
    const scope: Scope = what === 'board' ? { kind: 'board' } : what === 'selection' ? { kind: 'selection', ids: selected } : { kind: 'frame', id: what.slice('frame:'.length) };
    setBusy(true);
    try {
      const file = await exportFile(p, scope, kind, colours, kind === 'pdf' && perFrame);
      if (!file) {
        setError('There is nothing to export there.');
        return;
      }
      const frame = scope.kind === 'frame' ? frames.find((f) => f.id === scope.id)?.title : undefined;
      const suffix = scope.kind === 'selection' ? ' (selection)' : frame ? ` – ${frame}` : '';
      download(file.blob, fileName(`${boardName}${suffix}`, kind));
      onClose();
    } catch (e) {
      setError(`The export failed: ${(e as Error).message}`);
    } finally {
      setBusy(false);
    }
  }

  return (
    <Dialog title="Export" onClose={onClose}>
      <form
        className="export-form"
        onSubmit={(e) => {
          e.preventDefault();
          void run();
        }}
      >
        <fieldset>
          <legend>Format</legend>
          {FORMATS.map((f) => (
            <label key={f.kind} className="choice">
              <input type="radio" name={`${ids}-format`} checked={kind === f.kind} onChange={() => setKind(f.kind)} /> {f.label}
            </label>
          ))}
        </fieldset>
        {!canvas && (
          <>
            <label htmlFor={`${ids}-what`}>What</label>
            <select id={`${ids}-what`} value={what} onChange={(e) => setWhat(e.target.value)}>
              <option value="board">The whole board</option>
              <option value="selection" disabled={!selected.size}>
                The selection ({selected.size})
              </option>
              {frames.map((f) => (
                <option key={f.id} value={`frame:${f.id}`}>
                  Frame: {f.title || 'untitled'}
                </option>
              ))}
            </select>
            {kind === 'pdf' && frames.length > 0 && (
              <label className="choice">
                <input type="checkbox" checked={perFrame} onChange={(e) => setPerFrame(e.target.checked)} /> One page per frame
              </label>
            )}
            <fieldset>
              <legend>Colours</legend>
              <label className="choice">
                <input type="radio" name={`${ids}-scheme`} checked={colours === 'light'} onChange={() => setColours('light')} /> Light
              </label>
              <label className="choice">
                <input type="radio" name={`${ids}-scheme`} checked={colours === 'dark'} onChange={() => setColours('dark')} /> Dark
              </label>
            </fieldset>
          </>
        )}
        <FormActions error={error} busy={busy} label="Export" busyLabel="Exporting…" onClose={onClose} />
      </form>
    </Dialog>
  );
}
