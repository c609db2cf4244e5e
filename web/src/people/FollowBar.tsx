import { useEffect, useSyncExternalStore } from 'react';
import { createPortal } from 'react-dom';
import type { FollowStore } from './follow';

/** TOAST_MS is how long "Ana brought everyone here" stays unless dismissed. */
const TOAST_MS = 8000;

/** FollowBar says whom I follow, with Stop; and reads out when following stops or everyone was brought here. */
export function FollowBar({ follow }: { follow: FollowStore }) {
  const { following, notice } = useSyncExternalStore(follow.onChange, follow.getSnapshot);
  return (
    <>
      {following && (
        <p className="follow-bar" role="status" style={{ borderColor: following.color }} data-following={following.email}>
          <span className="follow-dot" style={{ background: following.color }} aria-hidden="true" />
          <span className="follow-text">
            {following.once ? 'Going to' : 'Following'} <strong>{following.name}</strong>
          </span>
          <span aria-hidden="true">·</span>
          <button type="button" className="link-button" onClick={() => follow.stop()} aria-label={following.once ? `Cancel going to ${following.email}` : `Stop following ${following.email}`}>
            {following.once ? 'Cancel' : 'Stop'}
          </button>
        </p>
      )}
      <p className="sr-only" role="status" aria-live="polite">
        {notice}
      </p>
    </>
  );
}

/**
 * SummonToast is "Ana brought everyone here": shown after a summon moved
 * my view, until dismissed or for 8 s. Its live region is always there,
 * so that it is read out when it shows.
 */
export function SummonToast({ follow }: { follow: FollowStore }) {
  const { toast } = useSyncExternalStore(follow.onChange, follow.getSnapshot);
  useEffect(() => {
    if (!toast) return;
    const h = setTimeout(() => follow.dismissToast(), TOAST_MS);
    return () => clearTimeout(h);
  }, [toast, follow]);
  return createPortal(
    <div className="summon-toast-region" role="status" aria-live="polite">
      {toast && (
        <p className="summon-toast" key={toast.key}>
          <span title={toast.text}>{toast.text}</span>
          <button type="button" className="summon-dismiss" onClick={() => follow.dismissToast()} aria-label="Dismiss">
            ✕
          </button>
        </p>
      )}
    </div>,
    document.body,
  );
}
