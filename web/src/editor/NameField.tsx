// NameField is the field over a connector's label or a frame's title while
// it is typed (Editor.startNaming): Enter or a click away keeps the text,
// Escape leaves it as it was.
import { useContext, useEffect, useRef } from 'react';
import { EditorContext } from './context';

export function NameField({ label, value, max, className }: { label: string; value: string; max: number; className?: string }) {
  const editor = useContext(EditorContext);
  const ref = useRef<HTMLInputElement>(null);
  const done = useRef(false);
  useEffect(() => {
    ref.current?.focus();
    ref.current?.select();
  }, []);
  const finish = (keep: boolean) => {
    if (done.current) return;
    done.current = true;
    if (keep) editor?.commitName(ref.current?.value ?? value);
    else editor?.cancelNaming();
  };
  return (
    <input
      ref={ref}
      className={`name-field nodrag nopan ${className ?? ''}`}
      aria-label={label}
      defaultValue={value}
      maxLength={max}
      onKeyDown={(e) => {
        e.stopPropagation();
        if (e.key === 'Enter') finish(true);
        else if (e.key === 'Escape') finish(false);
      }}
      onBlur={() => finish(true)}
      onDoubleClick={(e) => e.stopPropagation()}
    />
  );
}
