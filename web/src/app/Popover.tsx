import { useEffect, useRef, type KeyboardEvent, type ReactNode } from 'react';

/**
 * Popover is the frame of a non-modal popover that opens from a top-bar
 * button, both in one wrapper (the timer's and the vote's controls): when it
 * opens the focus moves to its first control (`first`, a selector); a press
 * outside the wrapper closes it, and so does Escape, which gives the focus
 * back to the button (`face`, its selector in the wrapper). Its keys never
 * reach the canvas's shortcuts, which listen on the document.
 */
export function Popover({ className, label, first, face, onClose, children }: { className: string; label: string; first: string; face: string; onClose: () => void; children: ReactNode }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    box.current?.querySelector<HTMLElement>(first)?.focus();
  }, [first]);
  useEffect(() => {
    const outside = (e: PointerEvent) => {
      const wrap = box.current?.parentElement;
      if (wrap && !wrap.contains(e.target as Node)) onClose();
    };
    document.addEventListener('pointerdown', outside);
    return () => document.removeEventListener('pointerdown', outside);
  }, [onClose]);
  const onKeyDown = (e: KeyboardEvent) => {
    e.stopPropagation();
    if (e.key === 'Escape') {
      e.preventDefault();
      onClose();
      box.current?.parentElement?.querySelector<HTMLElement>(face)?.focus();
    }
  };
  return (
    <div ref={box} className={className} role="dialog" aria-label={label} onKeyDown={onKeyDown}>
      {children}
    </div>
  );
}
