import { useSyncExternalStore } from 'react';
import { applyUpdate, onUpdateAvailable, updateAvailable } from './serviceWorker';

/** UpdatePrompt offers a new build of the app when one is waiting. */
export function UpdatePrompt() {
  const available = useSyncExternalStore(onUpdateAvailable, updateAvailable);
  if (!available) return null;
  return (
    <div className="update-prompt" role="status">
      A new version is available —{' '}
      <button type="button" className="primary" onClick={applyUpdate}>
        Reload
      </button>
    </div>
  );
}
