import { describe, expect, it } from 'vitest';
import type { TrackerItem } from '../api/types';
import { nextKeys } from './keys';

const item = (key: string): TrackerItem => ({ id: key, key, type: 'story', summary: '', updatedAt: '' });

describe('nextKeys', () => {
  it('continues after the largest key, CB-1 on an empty tracker', () => {
    expect(nextKeys([item('CB-1'), item('CB-7'), item('CB-2')], 3)).toEqual(['CB-8', 'CB-9', 'CB-10']);
    expect(nextKeys([], 2)).toEqual(['CB-1', 'CB-2']);
  });

  it('takes the prefix of the largest key and skips keys of another shape', () => {
    expect(nextKeys([item('CB-3'), item('WEB-12'), item('odd'), item('X-1-2')], 1)).toEqual(['WEB-13']);
  });
});
