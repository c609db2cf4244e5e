// ConnectorEdge draws a connector (issue 24) between the borders of its two
// ends: a straight line from centre to centre, cut where it leaves each box,
// so it follows both ends wherever they move (xyflow redraws an edge when a
// node it joins moves, the preview of a drag included). Its label sits in
// the middle; a double-click there renames it.
import { memo, useContext } from 'react';
import { BaseEdge, EdgeLabelRenderer, useInternalNode, type Edge, type EdgeProps, type InternalNode } from '@xyflow/react';
import type { Connector } from '../api/types';
import { EditorContext } from '../editor/context';
import { NameField } from '../editor/NameField';
import { MAX_LABEL, connectorColor, isDashed, isLine } from '../editor/structure';

export type ConnectorEdgeData = { connector: Connector; naming: boolean };
export type ConnectorFlowEdge = Edge<ConnectorEdgeData, 'connector'>;

type Box = { x: number; y: number; w: number; h: number };

function boxOf(n: InternalNode): Box {
  const p = n.internals.positionAbsolute;
  return { x: p.x, y: p.y, w: n.measured.width ?? n.width ?? 0, h: n.measured.height ?? n.height ?? 0 };
}

/** border is where the line from a box's centre towards (tx, ty) leaves the box. */
export function border(b: Box, tx: number, ty: number): { x: number; y: number } {
  const cx = b.x + b.w / 2;
  const cy = b.y + b.h / 2;
  const dx = tx - cx;
  const dy = ty - cy;
  if (!dx && !dy) return { x: cx, y: cy };
  const s = Math.min(dx ? b.w / 2 / Math.abs(dx) : Infinity, dy ? b.h / 2 / Math.abs(dy) : Infinity);
  return { x: cx + dx * s, y: cy + dy * s };
}

export const ConnectorEdge = memo(function ConnectorEdge({ id, source, target, data, selected, markerEnd }: EdgeProps<ConnectorFlowEdge>) {
  const editor = useContext(EditorContext);
  const a = useInternalNode(source);
  const b = useInternalNode(target);
  if (!a || !b || !data) return null;
  const ba = boxOf(a);
  const bb = boxOf(b);
  const p = border(ba, bb.x + bb.w / 2, bb.y + bb.h / 2);
  const q = border(bb, ba.x + ba.w / 2, ba.y + ba.h / 2);
  const c = data.connector;
  const colour = connectorColor(c.color);
  const mx = (p.x + q.x) / 2;
  const my = (p.y + q.y) / 2;
  return (
    <>
      <BaseEdge
        id={id}
        path={`M ${p.x},${p.y} L ${q.x},${q.y}`}
        markerEnd={isLine(c) ? undefined : markerEnd}
        interactionWidth={16}
        style={{ stroke: colour, strokeWidth: selected ? 3 : 2, strokeDasharray: isDashed(c) ? '8 6' : undefined }}
      />
      {(c.label || data.naming) && (
        <EdgeLabelRenderer>
          <div
            className={`connector-label nodrag nopan${selected ? ' selected' : ''}`}
            style={{ transform: `translate(-50%, -50%) translate(${mx}px, ${my}px)`, borderColor: colour }}
            data-connector-id={c.id}
            onClick={() => editor?.setSelection([c.id])}
            onDoubleClick={() => editor?.startNaming('connector', c.id)}
          >
            {data.naming ? <NameField label="Connector label" value={c.label} max={MAX_LABEL} /> : c.label}
          </div>
        </EdgeLabelRenderer>
      )}
    </>
  );
});
