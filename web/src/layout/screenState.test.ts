import { describe, expect, it, vi } from 'vitest';
import { ScreenStore } from './screenState';

describe('ScreenStore', () => {
  it('holds one panel at a time', () => {
    const s = new ScreenStore();
    s.openPanel('items');
    s.openPanel('chat');
    expect(s.getSnapshot().panel).toBe('chat');
    s.openHistory({ noteId: 'n1', openKey: 'k' });
    expect(s.getSnapshot()).toMatchObject({ panel: 'history', history: { noteId: 'n1', openKey: 'k' } });
    s.openPanel('snapshots');
    expect(s.getSnapshot()).toMatchObject({ panel: 'snapshots', history: null });
  });

  it('toggles a rail panel closed when it is the one shown', () => {
    const s = new ScreenStore();
    s.togglePanel('items');
    expect(s.getSnapshot().panel).toBe('items');
    s.togglePanel('chat');
    expect(s.getSnapshot().panel).toBe('chat');
    s.togglePanel('chat');
    expect(s.getSnapshot().panel).toBeNull();
  });

  it('remembers that the chat was opened, so it stays mounted', () => {
    const s = new ScreenStore();
    expect(s.getSnapshot().chatOpened).toBe(false);
    s.openPanel('chat');
    s.closePanel();
    s.openPanel('items');
    expect(s.getSnapshot()).toMatchObject({ panel: 'items', chatOpened: true });
  });

  it('closes the menu when a panel or a dialog opens', () => {
    for (const open of [(s: ScreenStore) => s.openPanel('snapshots'), (s: ScreenStore) => s.openHistory({}), (s: ScreenStore) => s.openDialog('import'), (s: ScreenStore) => s.startRename('x')]) {
      const s = new ScreenStore();
      s.setMenu(true);
      open(s);
      expect(s.getSnapshot().menuOpen).toBe(false);
    }
  });

  it('opens and closes dialogs beside the dock', () => {
    const s = new ScreenStore();
    s.openPanel('items');
    s.openDialog('share');
    expect(s.getSnapshot()).toMatchObject({ panel: 'items', dialog: 'share' });
    s.closeDialog();
    expect(s.getSnapshot()).toMatchObject({ panel: 'items', dialog: null });
  });

  it.each([
    ['a new name', '  Plan B ', 'Plan B'],
    ['the same name', 'Plan', null],
    ['an empty name', '   ', null],
  ])('rename with %s', (_, typed, saved) => {
    const s = new ScreenStore();
    s.startRename('Plan');
    expect(s.getSnapshot().renaming).toBe('Plan');
    s.typeName(typed);
    expect(s.finishRename('Plan')).toBe(saved);
    expect(s.getSnapshot().renaming).toBeNull();
  });

  it('ignores typing when not renaming, and cancel drops the draft', () => {
    const s = new ScreenStore();
    s.typeName('x');
    expect(s.getSnapshot().renaming).toBeNull();
    expect(s.finishRename('Plan')).toBeNull();
    s.startRename('Plan');
    s.typeName('Other');
    s.cancelRename();
    expect(s.getSnapshot().renaming).toBeNull();
  });

  it('notifies on changes only, and keeps the snapshot otherwise', () => {
    const s = new ScreenStore();
    const cb = vi.fn();
    const off = s.onChange(cb);
    const before = s.getSnapshot();
    s.closePanel();
    s.closeDialog();
    s.setMenu(false);
    expect(cb).not.toHaveBeenCalled();
    expect(s.getSnapshot()).toBe(before);
    s.setMenu(true);
    expect(cb).toHaveBeenCalledTimes(1);
    off();
    s.setMenu(false);
    expect(cb).toHaveBeenCalledTimes(1);
  });
});
