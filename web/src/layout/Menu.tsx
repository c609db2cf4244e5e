import { useEffect, useRef, type KeyboardEvent } from 'react';

/** MenuItem is one entry of a Menu: an action, a link, or one of a group of choices (checked set). */
export interface MenuItem {
  label: string;
  onSelect?: () => void;
  /** href makes the item a link (e.g. a download). */
  href?: string;
  download?: boolean;
  /** checked makes the item a radio choice (menuitemradio). */
  checked?: boolean;
  /** pressed makes the item a toggle (menuitemcheckbox), e.g. a panel of the tool rail. */
  pressed?: boolean;
  disabled?: boolean;
  /** name is the accessible name when the label says too little; keys its aria-keyshortcuts. */
  name?: string;
  keys?: string;
  /** separated draws a line above the item (a new group). */
  separated?: boolean;
}

/**
 * Menu is a button that opens a list of actions (the ARIA menu button
 * pattern): arrows move between items, Escape or a click outside closes it
 * and gives the focus back to the button. Its open state is the caller's
 * (the board screen's store).
 */
export function Menu({ label, buttonText, items, open, onOpenChange, className }: { label: string; buttonText: string; items: MenuItem[]; open: boolean; onOpenChange: (open: boolean) => void; className?: string }) {
  const button = useRef<HTMLButtonElement>(null);
  const list = useRef<HTMLDivElement>(null);
  const itemsOf = () => [...(list.current?.querySelectorAll<HTMLElement>('[role^="menuitem"]') ?? [])];

  useEffect(() => {
    if (!open) return;
    itemsOf()[0]?.focus();
    const outside = (e: PointerEvent) => {
      const t = e.target as Node;
      if (!list.current?.contains(t) && !button.current?.contains(t)) onOpenChange(false);
    };
    document.addEventListener('pointerdown', outside);
    return () => document.removeEventListener('pointerdown', outside);
  }, [open, onOpenChange]);

  const close = () => {
    onOpenChange(false);
    button.current?.focus();
  };
  const onKeyDown = (e: KeyboardEvent) => {
    e.stopPropagation(); // the canvas's shortcuts listen on the document
    const all = itemsOf();
    const i = all.indexOf(document.activeElement as HTMLElement);
    const go = (j: number) => {
      e.preventDefault();
      all[(j + all.length) % all.length]?.focus();
    };
    if (e.key === 'ArrowDown') go(i + 1);
    else if (e.key === 'ArrowUp') go(i - 1);
    else if (e.key === 'Home') go(0);
    else if (e.key === 'End') go(all.length - 1);
    else if (e.key === 'Escape' || e.key === 'Tab') {
      if (e.key === 'Escape') e.preventDefault();
      close();
    }
  };

  return (
    <div className={className ? `menu-wrap ${className}` : 'menu-wrap'}>
      <button ref={button} type="button" className="icon-button" aria-haspopup="menu" aria-expanded={open} aria-label={label} title={label} onClick={() => onOpenChange(!open)}>
        {buttonText}
      </button>
      {open && (
        <div ref={list} className="menu" role="menu" aria-label={label} onKeyDown={onKeyDown}>
          {items.map((it) => (
            <MenuEntry key={it.label} item={it} done={() => onOpenChange(false)} />
          ))}
        </div>
      )}
    </div>
  );
}

function MenuEntry({ item, done }: { item: MenuItem; done: () => void }) {
  const cls = item.separated ? 'separated' : undefined;
  if (item.href)
    return (
      <a role="menuitem" className={cls} tabIndex={-1} href={item.href} download={item.download || undefined} onClick={done}>
        {item.label}
      </a>
    );
  const radio = item.checked !== undefined;
  const toggle = item.pressed !== undefined;
  return (
      <button
        type="button"
        className={cls}
        role={radio ? 'menuitemradio' : toggle ? 'menuitemcheckbox' : 'menuitem'}
        aria-checked={radio ? item.checked : toggle ? item.pressed : undefined}
        // aria-disabled, not disabled: a disabled item stays reachable with the arrows (the menu pattern).
        aria-disabled={item.disabled || undefined}
        aria-label={item.name}
        aria-keyshortcuts={item.keys}
        tabIndex={-1}
        onClick={() => {
          if (item.disabled) return;
          done();
          item.onSelect?.();
        }}
      >
        {item.label}
      </button>
  );
}
