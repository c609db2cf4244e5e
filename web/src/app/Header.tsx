import type { ReactNode } from 'react';
import { navigate } from './router';
import { ThemeToggle } from '../layout/ThemeToggle';

/**
 * Header is the top bar, one row: the app's mark (home link), the screen's
 * own controls (children), its actions on the right (end), the theme
 * toggle and the user. viewOnly (a read-only link's page) has no user:
 * nobody is logged in there.
 */
export function Header({ email, onLogout, children, end, className, viewOnly = false }: { email: string; onLogout: () => void; children?: ReactNode; end?: ReactNode; className?: string; viewOnly?: boolean }) {
  return (
    <header className={className ? `topbar ${className}` : 'topbar'}>
      <a
        className="brand"
        href="/"
        onClick={(e) => {
          e.preventDefault();
          navigate('/');
        }}
      >
        <span className="brand-mark" aria-hidden="true" />
        <span className="brand-name">Corkboard</span>
      </a>
      <div className="topbar-main">{children}</div>
      {end}
      {viewOnly ? (
        <span className="topbar-user">
          <ThemeToggle />
        </span>
      ) : (
        <span className="topbar-user">
          <ThemeToggle />
          <span className="who" title={email}>
            {email}
          </span>
          <button type="button" onClick={onLogout}>
            Log out
          </button>
        </span>
      )}
    </header>
  );
}
