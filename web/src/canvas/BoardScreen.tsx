import { lazy, Suspense, useCallback, useEffect, useMemo, useRef, useState, useSyncExternalStore } from 'react';
import { ScreenStore } from '../layout/screenState';
import { Dock } from '../layout/Dock';
import { Menu, type MenuItem } from '../layout/Menu';
import type { Tool } from '../layout/tools';
import type { Editor, Rights } from '../editor/Editor';
import { PeopleBar } from '../people/PeopleBar';
import { FollowBar, SummonToast } from '../people/FollowBar';
import { followOf } from '../people/follow';
import { useTheme } from '../layout/ThemeToggle';
import { THEME_CHOICES, THEME_NAMES } from '../layout/theme';
import { snapshotDownloadUrl } from '../api/api';
import { emptyState, recover } from '../history/recovery';
import { useServices } from '../app/services';
import { Header } from '../app/Header';
import type { Access } from '../api/types';
import type { SyncClient, SyncState } from '../sync/client';
import { connectionBadge } from '../sync/badge';
import { checkForUpdate, reloadingForUpdate } from '../app/serviceWorker';
import { navigate } from '../app/router';
import { ShareDialog } from '../boards/ShareDialog';
import { TrackerPanel } from '../tracker/TrackerPanel';
import { PhasesBar } from './PhasesBar';
import { SessionTimer } from '../session/Timer';
import { useVoting, VoteBar, VoteButton } from '../vote/Vote';
import { VoteDots } from '../vote/VoteDots';
import { Canvas } from './Canvas';
import { UndoHistory } from './undo';
import { arrivedRevived, revivedAnnouncement } from './peopleView';
import type { Mark } from '../sync/marks';

// The history panel brings in `diff`: it is loaded when first opened.
const HistoryPanel = lazy(() => import('../history/HistoryPanel'));
const SnapshotsPanel = lazy(() => import('../history/SnapshotsPanel'));
// The AI chat brings in the AI SDK (docs/web-client.md, "AI"): loaded when first opened.
const ChatPanel = lazy(() => import('../ai/chat/ChatPanel'));
const ImportDialog = lazy(() => import('../ai/ImportDialog'));
const ExportDialog = lazy(() => import('../export/ExportDialog'));
const CanvasImportDialog = lazy(() => import('../export/CanvasImportDialog'));

interface Props {
  boardId: string;
  email: string;
  access: Access;
  onAccessChange: (a: Access) => void;
  onLogout: () => void;
  onSessionLost: () => void;
  /**
   * link: the board is opened with a read-only link (boards/LinkPage.tsx).
   * It is only viewed: no menu but the theme, no AI, history or sharing, no
   * account; a link that stops working (revoked, expired) calls onSessionLost.
   */
  link?: boolean;
}

/** BoardScreen opens the board's sync client and lays out the board. */
export function BoardScreen(props: Props) {
  const { openBoard, openChangelog } = useServices();
  const [client, setClient] = useState<SyncClient | null>(null);
  useEffect(() => {
    const c = openBoard(props.boardId);
    setClient(c);
    // The changelog is fed before start, so no local edit goes unlogged.
    const closeLog = openChangelog(c);
    void c.start();
    return () => {
      closeLog(); // reads the client's copy for waiting updates: before close
      c.close();
    };
  }, [openBoard, openChangelog, props.boardId]);
  if (!client) return null;
  return <Board {...props} client={client} />;
}

const noop = () => () => {};

function ConnectionBadge({ s }: { s: SyncState }) {
  const online = useSyncExternalStore(
    (cb) => {
      window.addEventListener('online', cb);
      window.addEventListener('offline', cb);
      return () => {
        window.removeEventListener('online', cb);
        window.removeEventListener('offline', cb);
      };
    },
    () => navigator.onLine,
  );
  const { text, cls } = connectionBadge(online, s.connection);
  return (
    <span className={`status ${cls}`} role="status" aria-live="polite" data-connection={cls}>
      <span className="dot" aria-hidden="true" /> {text}
    </span>
  );
}

function Board({ client, boardId, email, access, onAccessChange, onLogout, onSessionLost, link = false }: Props & { client: SyncClient }) {
  const s = useSyncExternalStore(client ? (cb) => client.onChange(cb) : noop, client.getSnapshot);
  // Which panel, dialog and menu are open, and the rename draft (layout/screenState.ts).
  const screen = useMemo(() => new ScreenStore(), []);
  const ui = useSyncExternalStore(screen.onChange, screen.getSnapshot);
  const [announcement, setAnnouncement] = useState('');
  // One undo history per board, shared by the canvas, the work items and the AI chat (an AI turn is one step).
  const undo = useMemo(() => new UndoHistory(client), [client]);
  // Following someone's view and being brought to the owner's (src/people/).
  const follow = followOf(client.presence);
  useEffect(() => follow.attach(), [follow]);
  const theme = useTheme();
  // The canvas's editor: the export reads its selection.
  const [editor, setEditor] = useState<Editor | null>(null);
  // The live channel's answer is newer than the one the board opened with:
  // a plan change turns the board editable, or view only, without a reload.
  const canEdit = (s.canEdit ?? access.canEdit) && s.connection !== 'forbidden';
  // Locks and roles (docs/api.md): the live channel's role is newer than the one the board opened with.
  const role = s.role ?? access.role ?? 'edit';
  const rights = useMemo<Rights>(() => ({ isOwner: access.isOwner, role, me: email }), [access.isOwner, role, email]);
  const name = s.name || boardId;

  useEffect(() => {
    document.title = `${name} · Corkboard`;
  }, [name]);

  useEffect(() => {
    if (s.authLost) onSessionLost();
  }, [s.authLost, onSessionLost]);

  // A read-only link revoked (or expired) while open: its socket is closed
  // with 4003, and the page says the link no longer works.
  useEffect(() => {
    if (link && s.connection === 'forbidden') onSessionLost();
  }, [link, s.connection, onSessionLost]);

  // Unsent edits are safe in IndexedDB, but the user should know they have
  // not reached anyone yet.
  useEffect(() => {
    if (!s.pending) return;
    const warn = (e: BeforeUnloadEvent) => {
      if (reloadingForUpdate()) return; // the user asked for it; the edits stay in IndexedDB
      e.preventDefault();
      e.returnValue = '';
    };
    window.addEventListener('beforeunload', warn);
    return () => window.removeEventListener('beforeunload', warn);
  }, [s.pending]);

  // The live connection coming back may mean the server restarted, maybe
  // with a new build: look for a new service worker.
  const [wasOnline, setWasOnline] = useState(false);
  useEffect(() => {
    if (s.connection !== 'online') return;
    if (wasOnline) checkForUpdate();
    else setWasOnline(true);
  }, [s.connection, wasOnline]);

  // The spec's recovery rule: no local state (seen when the local copy is
  // read) and no data on the server (seen after the first pull): rebuild the
  // board from its latest snapshot.
  const { api } = useServices();
  const recovered = useRef(false);
  useEffect(() => {
    if (recovered.current || !s.synced || client.hadLocalState() !== false) return;
    recovered.current = true;
    if (!emptyState(s) || !canEdit) return;
    void recover(api, boardId, client)
      .then((key) => key && setAnnouncement('This board had no data: it was rebuilt from its latest snapshot.'))
      .catch(() => {});
  }, [s, canEdit, api, boardId, client]);

  // The same words twice (two undos) must change the live region to be read again.
  const announce = useCallback((m: string) => setAnnouncement((was) => (was === m ? m + '\u00a0' : m)), []);
  const openNoteHistory = useCallback((noteId: string) => screen.openHistory({ noteId }), [screen]);
  // A work item a search found: the work items panel.
  const openItem = useCallback(() => screen.openPanel('items'), [screen]);
  // A mark's button on a note: its History, at the changelog entry the mark names; the mark has been seen.
  const openMark = useCallback(
    (m: Mark) => {
      screen.openHistory({ noteId: m.id, openKey: m.logKey });
      client.dismissMark(m.id, m.table);
    },
    [client, screen],
  );

  // Never silent: a note I deleted that someone brought back is announced
  // when the news arrives (marks kept from before a reload are not news).
  const seenMarks = useRef<Set<string> | null>(null);
  useEffect(() => {
    if (!s.loaded) return;
    if (!seenMarks.current) {
      seenMarks.current = new Set();
      arrivedRevived(seenMarks.current, s.marks);
      return;
    }
    const back = arrivedRevived(seenMarks.current, s.marks);
    if (back.length) setAnnouncement(revivedAnnouncement(back.map((m) => s.notes.get(m.id)?.title ?? '')));
  }, [s.loaded, s.marks, s.notes]);
  const waiting = s.waiting;
  const voting = useVoting(boardId, s.board?.vote ?? null, s.board?.timer ?? null, s.connection);

  const setMenu = useCallback((open: boolean) => screen.setMenu(open), [screen]);
  const closePanel = useCallback(() => screen.closePanel(), [screen]);
  const themeItems: MenuItem[] = THEME_CHOICES.map((c, i) => ({ label: `${THEME_NAMES[c]} theme`, checked: theme.choice === c, separated: i === 0, onSelect: () => theme.store.set(c) }));
  const menuItems: MenuItem[] = link ? themeItems : [
    ...(canEdit ? [{ label: 'Rename', onSelect: () => screen.startRename(name) }] : []),
    { label: 'Deleted notes', onSelect: () => screen.openHistory({}) },
    { label: 'Vote history', onSelect: () => screen.openHistory({ action: 'reveal_vote' }) },
    { label: 'Snapshots', onSelect: () => screen.openPanel('snapshots') },
    ...(canEdit ? [{ label: 'Import document', onSelect: () => screen.openDialog('import') }] : []),
    { label: 'Export…', onSelect: () => screen.openDialog('export') },
    { label: 'Export as Markdown', href: snapshotDownloadUrl(boardId), download: true },
    { label: 'Import JSON Canvas…', onSelect: () => screen.openDialog('importCanvas') },
    ...(access.isOwner ? [{ label: 'Bring everyone here', onSelect: () => follow.bringEveryone() }] : []),
    ...(access.isOwner ? [{ label: 'Edit phases', onSelect: () => screen.openDialog('phases') }] : []),
    ...themeItems,
    { label: 'All boards', separated: true, onSelect: () => navigate('/') },
    { label: 'Log out', onSelect: onLogout },
  ];
  const itemCount = s.items.size;
  const rail: Tool[] = useMemo(
    () => [
      { id: 'items', label: `Work items (${itemCount})`, pressed: ui.panel === 'items', startsGroup: true, onSelect: () => screen.togglePanel('items'), rank: 3 },
      ...(link ? [] : [{ id: 'chat', label: 'AI assistant', pressed: ui.panel === 'chat', onSelect: () => screen.togglePanel('chat'), rank: 4 }]),
    ],
    [itemCount, ui.panel, screen, link],
  );

  return (
    <div className="board-screen">
      <Header
        email={email}
        onLogout={onLogout}
        viewOnly={link}
        className="board-topbar"
        end={
          <div className="topbar-actions">
            <SessionTimer boardId={boardId} timer={s.board?.timer ?? null} version={s.version} isOwner={access.isOwner} connection={s.connection} phase={currentPhase(access)} />
            {access.isOwner && <VoteButton voting={voting} frames={s.frames} timerOn={!!s.board?.timer} />}
            {/* A read-only link is nobody the board knows: no list of who is here (its socket gets no presence). */}
            {!link && <PeopleBar presence={client.presence} follow={follow} isOwner={access.isOwner} />}
            {access.isOwner && (
              <button type="button" className="primary share-button" onClick={() => screen.openDialog('share')}>
                Share
              </button>
            )}
            <Menu label="Board menu" buttonText="⋯" items={menuItems} open={ui.menuOpen} onOpenChange={setMenu} />
          </div>
        }
      >
        {ui.renaming !== null ? (
          <form
            className="rename"
            onSubmit={(e) => {
              e.preventDefault();
              const next = screen.finishRename(name);
              if (next) client.rename(next);
            }}
          >
            <label htmlFor="board-name" className="sr-only">
              Board name
            </label>
            <input id="board-name" value={ui.renaming} maxLength={200} onChange={(e) => screen.typeName(e.target.value)} autoFocus onKeyDown={(e) => e.key === 'Escape' && screen.cancelRename()} />
            <button type="submit" className="primary">
              Save
            </button>
            <button type="button" onClick={() => screen.cancelRename()}>
              Cancel
            </button>
          </form>
        ) : (
          <h1 className="screen-title" title={name}>
            {canEdit ? (
              <button type="button" className="title-button" onClick={() => screen.startRename(name)} aria-label={`Rename ${name}`}>
                {name}
              </button>
            ) : (
              name
            )}
          </h1>
        )}
        {link && (
          <span className="view-only-mark" title="Opened with a read-only link: you can look, not change anything.">
            View only
          </span>
        )}
        <ConnectionBadge s={s} />
        <span className="pending" role="status" aria-live="polite" data-pending={waiting}>
          {waiting > 0 ? `${waiting} edit${waiting === 1 ? '' : 's'} waiting to sync` : s.synced ? 'All changes saved' : ''}
        </span>
      </Header>
      <div className={`board-body${ui.panel ? ' dock-open' : ''}${ui.panel === 'history' || ui.panel === 'snapshots' ? ' dock-wide' : ''}`}>
        <Canvas client={client} notes={s.notes} canEdit={canEdit} ready={s.synced || (s.loaded && s.notes.size > 0)} onAnnounce={announce} onNoteHistory={link ? undefined : openNoteHistory} undo={undo} marks={s.marks} onMark={openMark} railTools={rail} onEditor={setEditor} items={s.items} onItem={openItem} overlay={link ? undefined : <VoteDots vote={voting.vote} dots={voting.dots} notes={s.notes} frames={s.frames} />} rights={rights} />
        <div className="board-notices">
          <FollowBar follow={follow} />
          <PhasesBar boardId={boardId} access={access} onAccessChange={onAccessChange} editing={ui.dialog === 'phases'} onEditingDone={() => screen.closeDialog()} />
          <VoteBar voting={voting} notes={s.notes} items={s.items} canEdit={canEdit} undo={undo} />
          {!canEdit && (
            <p className="banner" role="status">
              View only: {link ? 'you opened this board with a read-only link.' : access.isOwner ? 'you cannot edit right now.' : 'on the free plan, boards shared with you can be viewed, not edited. A paid plan lets you edit them.'}
            </p>
          )}
          {canEdit && role === 'add' && !access.isOwner && (
            <p className="banner" role="status">
              You can add notes and edit your own; the others open read only.
            </p>
          )}
          {s.undone.length > 0 && (
            <section className="rejected" role="alert" aria-label="Edits undone">
              <h2>Some edits were undone</h2>
              <ul className="plain">
                {s.undone.map((u) => (
                  <li key={u.seq}>
                    {describeEdit(u.kind, u.op, { title: u.title }, u.id)}: {u.message}{' '}
                    <button type="button" onClick={() => client.dismissUndone(u.seq)}>
                      OK
                    </button>
                  </li>
                ))}
              </ul>
            </section>
          )}
          {s.rejected.length > 0 && (
            <section className="rejected" role="alert" aria-label="Edits the server refused">
              <h2>Some edits were refused</h2>
              <ul className="plain">
                {s.rejected.map((e) => (
                  <li key={e.seq}>
                    {describeEdit(e.kind, e.op, (e.row as { title?: string; key?: string } | undefined) ?? {}, e.id)}: {e.rejected?.message}{' '}
                    <button type="button" onClick={() => client.retryRejected(e.seq)}>
                      Try again
                    </button>{' '}
                    <button type="button" onClick={() => client.discardRejected(e.seq)}>
                      Discard this edit
                    </button>
                  </li>
                ))}
              </ul>
            </section>
          )}
        </div>
        <Dock open={ui.panel !== null} onClose={closePanel}>
          {ui.panel === 'items' && (
            <div className="dock-slot">
              <TrackerPanel client={client} items={s.items} canEdit={canEdit} undo={undo} />
              <button type="button" className="dock-close dock-close-corner" onClick={closePanel} aria-label="Close work items">
                ✕
              </button>
            </div>
          )}
          {ui.chatOpened && (
            <Suspense fallback={<p role="status">Loading the AI assistant…</p>}>
              <ChatPanel hidden={ui.panel !== 'chat'} client={client} boardId={boardId} canEdit={canEdit} rights={rights} phases={access.phases} undo={undo} onClose={closePanel} />
            </Suspense>
          )}
          {ui.panel === 'history' && (
            <Suspense fallback={<p role="status">Loading the history…</p>}>
              <HistoryPanel
                key={`${ui.history?.noteId ?? ''} ${ui.history?.openKey ?? ''} ${ui.history?.action ?? ''}`}
                boardId={boardId}
                noteId={ui.history?.noteId}
                openKey={ui.history?.openKey}
                action={ui.history?.action}
                notes={s.notes}
                frames={s.frames}
                canEdit={canEdit}
                // A restore is a normal edit: pushed, seen live, logged, undone by another restore.
                onRestore={(n) => client.upsertNote({ ...n, deletedAt: undefined })}
                onClose={closePanel}
              />
            </Suspense>
          )}
          {ui.panel === 'snapshots' && (
            <Suspense fallback={<p role="status">Loading the snapshots…</p>}>
              <SnapshotsPanel
                boardId={boardId}
                now={{ notes: s.notes, items: s.items, name: s.name }}
                canEdit={canEdit}
                onApply={(plan) => void import('../history/restore').then((m) => m.applyPlan(client, plan))}
                onClose={closePanel}
              />
            </Suspense>
          )}
        </Dock>
      </div>
      <p className="sr-only" role="status" aria-live="polite">
        {announcement}
      </p>
      {ui.dialog === 'import' && (
        <Suspense fallback={<p role="status">Loading the importer…</p>}>
          <ImportDialog client={client} onClose={() => screen.closeDialog()} />
        </Suspense>
      )}
      {ui.dialog === 'export' && (
        <Suspense fallback={<p role="status">Loading the export…</p>}>
          <ExportDialog
            boardId={boardId}
            boardName={name || boardId}
            picture={() => ({ notes: [...s.notes.values()], frames: [...s.frames.values()], connectors: [...s.connectors.values()] })}
            selected={editor?.getSnapshot().selected ?? NO_SELECTION}
            scheme={document.documentElement.dataset.scheme === 'dark' ? 'dark' : 'light'}
            onClose={() => screen.closeDialog()}
          />
        </Suspense>
      )}
      {ui.dialog === 'importCanvas' && (
        <Suspense fallback={<p role="status">Loading the import…</p>}>
          <CanvasImportDialog boardId={boardId} canEdit={canEdit} onClose={() => screen.closeDialog()} />
        </Suspense>
      )}
      <SummonToast follow={follow} />
      {ui.dialog === 'share' && <ShareDialog boardId={boardId} onClose={() => screen.closeDialog()} />}
    </div>
  );
}

const NO_SELECTION: ReadonlySet<string> = new Set();

/** currentPhase is the board's current phase, which a timer may be started for. */
function currentPhase(a: Access): { id: string; name: string } | null {
  const id = a.phases?.currentPhaseId;
  const p = id ? a.phases?.phases.find((ph) => ph.id === id) : undefined;
  return p ? { id: p.id, name: p.name || p.id } : null;
}

function describeEdit(kind: string, op: string, row: { title?: string; key?: string }, id: string): string {
  if (kind === 'board') return 'Renaming the board';
  const what = kind === 'note' ? `note "${row.title || id}"` : `work item ${row.key || id}`;
  return `${op === 'delete' ? 'Deleting' : 'Saving'} ${what}`;
}
