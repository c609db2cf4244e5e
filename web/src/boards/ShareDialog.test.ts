import { describe, expect, it } from 'vitest';
import { accessWhy, orList } from './ShareDialog';

describe('ShareDialog wording', () => {
  it('joins plan names as people read them', () => {
    expect(orList([])).toBe('');
    expect(orList(['pro'])).toBe('pro');
    expect(orList(['pro', 'team'])).toBe('pro or team');
    expect(orList(['a', 'b', 'c'])).toBe('a, b or c');
  });
  it('says what an invitee can do and why', () => {
    expect(accessWhy({ email: 'a@x', canEdit: true, plan: 'pro' }, ['pro', 'team'])).toBe('Can edit: their plan (pro) lets invitees edit.');
    expect(accessWhy({ email: 'a@x', canEdit: false, plan: 'free' }, ['pro', 'team'])).toBe(
      'View only: on the free plan, invitees view boards. They can edit once their plan is pro or team.',
    );
    expect(accessWhy({ email: 'a@x', canEdit: false, plan: 'free' }, [])).toBe('View only: on the free plan, invitees view boards.');
  });
});
