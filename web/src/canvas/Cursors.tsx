import { useEffect, useRef, useState, useSyncExternalStore } from 'react';
import { ViewportPortal } from '@xyflow/react';
import type { Presence, PresenceStore } from '../sync/presence';

type Shown = Presence & { leaving?: boolean };

/**
 * Cursors draws other people's pointers with their names; a leaver fades
 * out. It subscribes to presence itself, so a moving pointer re-renders the
 * cursors and not the board.
 */
export function Cursors({ presence }: { presence: PresenceStore }) {
  const { peers } = useSyncExternalStore(presence.onChange, presence.getSnapshot);
  const [shown, setShown] = useState<Map<string, Shown>>(new Map());
  const timers = useRef(new Map<string, ReturnType<typeof setTimeout>>());

  useEffect(() => {
    setShown((prev) => {
      const next = new Map<string, Shown>();
      for (const [id, p] of peers) {
        if (p.x !== undefined) next.set(id, p);
        clearTimeout(timers.current.get(id));
        timers.current.delete(id);
      }
      for (const [id, p] of prev) {
        if (next.has(id) || p.leaving) {
          if (!next.has(id)) next.set(id, p);
          continue;
        }
        next.set(id, { ...p, leaving: true });
        timers.current.set(
          id,
          setTimeout(() => {
            timers.current.delete(id);
            setShown((m) => {
              const c = new Map(m);
              if (c.get(id)?.leaving) c.delete(id);
              return c;
            });
          }, 1200),
        );
      }
      return next;
    });
  }, [peers]);

  useEffect(() => () => timers.current.forEach((t) => clearTimeout(t)), []);

  return (
    <ViewportPortal>
      {[...shown.values()].map((p) => (
        <div key={p.id} className={p.leaving ? 'cursor leaving' : 'cursor'} style={{ transform: `translate(${p.x}px, ${p.y}px)` }} aria-hidden="true">
          <svg width="18" height="18" viewBox="0 0 18 18">
            <path d="M1 1 L1 15 L5 11 L8 17 L10 16 L7 10 L13 10 Z" fill={p.color} stroke="white" strokeWidth="1.2" />
          </svg>
          <span className="cursor-name" style={{ background: p.color }}>
            {p.email}
          </span>
        </div>
      ))}
    </ViewportPortal>
  );
}
