// LockIcon: the padlock of locks (docs/web-client.md, "Locks and roles").

/** LockIcon is the padlock on a locked note (drawn, not an emoji: not every system has an emoji font). */
export function LockIcon({ label = 'Locked', className = 'note-lock' }: { label?: string | null; className?: string }) {
  const a11y = label ? { role: 'img', 'aria-label': label } : { 'aria-hidden': true };
  return (
    <svg className={className} {...a11y} viewBox="0 0 12 14" width="11" height="13">
      {label && <title>Locked by the board's owner</title>}
      <path d="M3 6V4a3 3 0 0 1 6 0v2" fill="none" stroke="currentColor" strokeWidth="1.6" />
      <rect x="1" y="6" width="10" height="7.5" rx="1.5" fill="currentColor" />
    </svg>
  );
}
