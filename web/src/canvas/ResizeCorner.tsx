// ResizeCorner is the bottom-right corner a note or a frame is resized
// from. It turns a pointer drag into sizes in board units (the drag divided
// by the zoom at its start); what a size means is the caller's.
import { useRef } from 'react';
import { useStoreApi } from '@xyflow/react';

export type ResizeCornerProps = {
  className: string;
  title: string;
  /** w and h are the size when the drag starts. */
  w: number;
  h: number;
  /** onSize gets each size the pointer passes, onEnd the last one; onCancel when the browser takes the pointer away. */
  onSize: (w: number, h: number) => void;
  onEnd: (w: number, h: number) => void;
  onCancel: () => void;
};

export function ResizeCorner({ className, title, w, h, onSize, onEnd, onCancel }: ResizeCornerProps) {
  const flow = useStoreApi();
  const drag = useRef<{ x: number; y: number; w: number; h: number; zoom: number } | null>(null);
  const size = (r: { x: number; y: number; w: number; h: number; zoom: number }, e: React.PointerEvent) =>
    [r.w + (e.clientX - r.x) / r.zoom, r.h + (e.clientY - r.y) / r.zoom] as const;
  return (
    <div
      className={`${className} nodrag nopan`}
      aria-hidden="true"
      title={title}
      onPointerDown={(e) => {
        e.stopPropagation();
        e.currentTarget.setPointerCapture(e.pointerId);
        drag.current = { x: e.clientX, y: e.clientY, w, h, zoom: flow.getState().transform[2] || 1 };
      }}
      onPointerMove={(e) => {
        const r = drag.current;
        if (r) onSize(...size(r, e));
      }}
      onPointerUp={(e) => {
        const r = drag.current;
        if (!r) return;
        e.stopPropagation();
        drag.current = null;
        onEnd(...size(r, e));
      }}
      onPointerCancel={() => {
        drag.current = null;
        onCancel();
      }}
    />
  );
}
