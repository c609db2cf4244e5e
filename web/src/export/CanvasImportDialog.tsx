import { useId, useState } from 'react';
import { Dialog, FormActions } from '../app/Dialog';
import './export.css';
import type { ApiError } from '../api/api';
import { useServices } from '../app/services';
import { randomId } from '../boards/ids';
import { renameBoard } from '../boards/BoardList';
import { boardPath, navigate } from '../app/router';

/** MAX_CANVAS_BYTES is the server's limit on an import (a push's, 64 MiB). */
const MAX_CANVAS_BYTES = 64 << 20;

/**
 * CanvasImportDialog reads a JSON Canvas file and writes it into a new
 * board (named after the file; opened after) or into this one, through the
 * server's import (one push: all of it or nothing). The server's refusal
 * names the document's field.
 */
export default function CanvasImportDialog({ boardId, canEdit, onClose }: { boardId: string; canEdit: boolean; onClose: () => void }) {
  const { api } = useServices();
  const [file, setFile] = useState<File | null>(null);
  const [into, setInto] = useState<'new' | 'this'>('new');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  const ids = useId();

  async function run() {
    if (!file) return setError('Choose a .canvas file.');
    if (file.size > MAX_CANVAS_BYTES) return setError('The file is larger than 64 MB, the most an import takes.');
    setError('');
    setBusy(true);
    try {
      let doc: unknown;
      try {
        doc = JSON.parse(await file.text());
      } catch {
        setError('The file is not JSON: a .canvas file is a JSON Canvas document.');
        return;
      }
      const target = into === 'this' ? boardId : randomId();
      if (into === 'new') await api.claim(target);
      await api.importCanvas(target, doc);
      if (into === 'new') {
        const name = file.name.replace(/\.canvas$/i, '').trim();
        if (name) await renameBoard(api, target, name.slice(0, 200));
        navigate(boardPath(target));
      }
      onClose();
    } catch (e) {
      const err = e as ApiError;
      setError(`The import failed: ${err.message}${err.field ? ` (${err.field})` : ''}`);
    } finally {
      setBusy(false);
    }
  }

  return (
    <Dialog title="Import a JSON Canvas file" onClose={onClose}>
      <form
        className="canvas-import"
        onSubmit={(e) => {
          e.preventDefault();
          void run();
        }}
      >
        <label htmlFor={`${ids}-file`}>JSON Canvas file</label>
        <input id={`${ids}-file`} type="file" accept=".canvas,application/json" onChange={(e) => setFile(e.target.files?.[0] ?? null)} />
        <fieldset>
          <legend>Import into</legend>
          <label className="choice">
            <input type="radio" name={`${ids}-into`} checked={into === 'new'} onChange={() => setInto('new')} /> A new board
          </label>
          <label className="choice">
            <input type="radio" name={`${ids}-into`} checked={into === 'this'} disabled={!canEdit} onChange={() => setInto('this')} /> This board (notes with the same id are replaced)
          </label>
        </fieldset>
        <FormActions error={error} busy={busy} label="Import" busyLabel="Importing…" onClose={onClose} />
      </form>
    </Dialog>
  );
}
