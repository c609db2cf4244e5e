import { useEffect, useId, useRef, type ReactNode } from 'react';

/** Dialog is a modal <dialog>: focus moves in (to a [data-autofocus] field if any), Escape closes, focus returns. */
export function Dialog({ title, onClose, children, wide }: { title: string; onClose: () => void; children: ReactNode; wide?: boolean }) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const d = ref.current!;
    const back = document.activeElement as HTMLElement | null;
    if (!d.open) d.showModal();
    // showModal focuses the first focusable element (the ✕ button) unless
    // one has the autofocus attribute, which React's autoFocus does not set;
    // a field marked data-autofocus gets the focus instead.
    d.querySelector<HTMLElement>('[data-autofocus]')?.focus();
    return () => {
      back?.focus?.();
    };
  }, []);
  return (
    <dialog
      ref={ref}
      className={wide ? 'dialog wide' : 'dialog'}
      aria-labelledby={titleId}
      onCancel={(e) => {
        e.preventDefault();
        onClose();
      }}
      onKeyDown={(e) => e.stopPropagation()}
    >
      <div className="dialog-head">
        <h2 id={titleId}>{title}</h2>
        <button type="button" onClick={onClose} aria-label="Close">
          ✕
        </button>
      </div>
      {children}
    </dialog>
  );
}

/** FormActions ends a dialog's form: its error, if any, then the submit button (busyLabel while the form is busy) and Cancel. */
export function FormActions({ error, busy, label, busyLabel, onClose }: { error: string; busy: boolean; label: string; busyLabel: string; onClose: () => void }) {
  return (
    <>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      <div className="row dialog-actions">
        <button type="submit" className="primary" disabled={busy}>
          {busy ? busyLabel : label}
        </button>
        <button type="button" onClick={onClose}>
          Cancel
        </button>
      </div>
    </>
  );
}
