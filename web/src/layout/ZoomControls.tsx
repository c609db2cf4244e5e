import { Panel, useReactFlow, useStore } from '@xyflow/react';
import { fitOptions, zoomPercent } from './zoom';

const zoomOf = (s: { transform: [number, number, number] }) => s.transform[2];

/**
 * ZoomControls are the canvas's zoom buttons in its bottom-left corner:
 * zoom out, the zoom in percent (a button that goes back to 100 %), zoom
 * in, and zoom to fit. It is rendered inside the ReactFlow component.
 * onFit, when given, fits instead of xyflow's fitView (the board canvas
 * gives xyflow only the rows near the view: fitView would fit those).
 */
export function ZoomControls({ onFit }: { onFit?: () => void }) {
  const rf = useReactFlow();
  const zoom = useStore(zoomOf);
  return (
    <Panel position="bottom-left" className="zoom-controls" role="group" aria-label="Zoom controls">
      <button type="button" onClick={() => void rf.zoomOut()} aria-label="Zoom out" aria-keyshortcuts="-" title="Zoom out (-)">
        −
      </button>
      <button type="button" className="zoom-level" onClick={() => void rf.zoomTo(1)} aria-label={`Zoom ${zoomPercent(zoom)}, reset to 100 %`} title="Reset to 100 %">
        {zoomPercent(zoom)}
      </button>
      <button type="button" onClick={() => void rf.zoomIn()} aria-label="Zoom in" aria-keyshortcuts="+" title="Zoom in (+)">
        +
      </button>
      <button type="button" onClick={() => (onFit ? onFit() : void rf.fitView(fitOptions(window.innerWidth)))} aria-label="Zoom to fit" aria-keyshortcuts="0" title="Zoom to fit (0)">
        <svg viewBox="0 0 16 16" width="16" height="16" aria-hidden="true" focusable="false">
          <path d="M2 6V2h4M10 2h4v4M14 10v4h-4M6 14H2v-4" fill="none" stroke="currentColor" strokeWidth="1.6" />
        </svg>
      </button>
    </Panel>
  );
}
