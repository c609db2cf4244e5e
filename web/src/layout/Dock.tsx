import { useEffect, useId, useRef, type KeyboardEvent, type ReactNode } from 'react';

/**
 * Dock is the one place side panels open: over the canvas, on the right (a
 * bottom sheet on phones, app.css). Escape inside it closes the panel.
 * Keys typed in a panel stay there: the canvas's shortcuts (arrows, N,
 * Delete) listen on the document.
 */
export function Dock({ open, onClose, children }: { open: boolean; onClose: () => void; children: ReactNode }) {
  // Escape with the focus on the canvas (or nowhere) closes the dock too;
  // not while a modal dialog is open, which Escape closes first.
  useEffect(() => {
    if (!open) return;
    const onDocKey = (e: globalThis.KeyboardEvent) => {
      if (e.key !== 'Escape' || e.defaultPrevented || document.querySelector('dialog[open]')) return;
      const t = e.target as HTMLElement | null;
      if (t && t !== document.body && t.closest('input, textarea, select, [role="menu"]')) return;
      onClose();
    };
    document.addEventListener('keydown', onDocKey);
    return () => document.removeEventListener('keydown', onDocKey);
  }, [open, onClose]);
  const onKeyDown = (e: KeyboardEvent) => {
    e.stopPropagation();
    if (e.key === 'Escape' && !e.defaultPrevented) {
      e.preventDefault();
      onClose();
    }
  };
  return (
    <div className={open ? 'dock open' : 'dock'} onKeyDown={onKeyDown} data-dock={open ? 'open' : 'closed'}>
      {children}
    </div>
  );
}

/**
 * DockPanel is a titled panel in the dock with a Close button, a
 * non-modal dialog for assistive technology: focus moves into it when it
 * opens (to a [data-autofocus] element if any) and back where it was when
 * it closes. It takes Dialog's props, so a panel can move between the two.
 */
export function DockPanel({ title, onClose, children }: { title: string; onClose: () => void; children: ReactNode; wide?: boolean }) {
  const ref = useRef<HTMLElement>(null);
  const titleId = useId();
  useEffect(() => {
    const back = document.activeElement as HTMLElement | null;
    const el = ref.current!;
    (el.querySelector<HTMLElement>('[data-autofocus]') ?? el.querySelector<HTMLElement>('.dock-close'))?.focus();
    return () => {
      // Only when the focus was in the panel: closing it must not steal the focus from the canvas.
      if (back?.isConnected && (!document.activeElement || document.activeElement === document.body || el.contains(document.activeElement))) back.focus?.();
    };
  }, []);
  return (
    <section ref={ref} className="dock-panel" role="dialog" aria-modal="false" aria-labelledby={titleId}>
      <header className="dock-head">
        <h2 id={titleId}>{title}</h2>
        <button type="button" className="dock-close" onClick={onClose} aria-label="Close">
          ✕
        </button>
      </header>
      <div className="dock-body">{children}</div>
    </section>
  );
}
