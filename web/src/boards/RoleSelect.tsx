// RoleSelect is the share dialog's per-invitee role (docs/api.md, "Locks
// and roles"): the owner chooses Can view / Can add notes / Can edit; what
// the invitee may do is the lesser of that and their plan's.
import { useId } from 'react';
import type { InviteeAccess, Role } from '../api/types';
import { accessWhy } from './ShareDialog';

export const ROLE_LABELS: Record<Role, string> = { view: 'Can view', add: 'Can add notes', edit: 'Can edit' };

/** roleWhy says what an invitee can do and why: their role, capped by their plan. */
export function roleWhy(a: InviteeAccess, editPlans: readonly string[]): string {
  const chosen = a.chosenRole ?? 'edit';
  if (!a.canEdit && chosen !== 'view') return accessWhy(a, editPlans);
  if (chosen === 'view') return 'View only: you chose so.';
  if (chosen === 'add') return 'Can add notes and edit their own; the others open read only for them.';
  return accessWhy(a, editPlans);
}

/** RoleSelect picks an invitee's role; onChange gets the new one (the dialog sends it). */
export function RoleSelect({ access, disabled, onChange }: { access: InviteeAccess; disabled?: boolean; onChange: (r: Role) => void }) {
  const id = useId();
  return (
    <span className="role-select">
      <label htmlFor={id} className="sr-only">
        Role of {access.email}
      </label>
      <select id={id} value={access.chosenRole ?? 'edit'} disabled={disabled} onChange={(e) => onChange(e.target.value as Role)}>
        {(Object.keys(ROLE_LABELS) as Role[]).map((r) => (
          <option key={r} value={r}>
            {ROLE_LABELS[r]}
          </option>
        ))}
      </select>
    </span>
  );
}
