import { describe, expect, it } from 'vitest';
import { filterCommands, removeSlash, slashQuery } from './slash';

const COMMANDS = [
  { command: 'generate-prd', label: 'PRD', description: '' },
  { command: 'generate-epic', label: 'Epic', description: '' },
  { command: 'generate-qa-test', label: 'QA test plan', description: '' },
  { command: 'generate-decision', label: 'Decision record', description: '' },
];

describe('slashQuery', () => {
  const cases: { name: string; text: string; caret?: number; want: ReturnType<typeof slashQuery> }[] = [
    { name: 'a bare slash at the start', text: '/', want: { start: 0, end: 1, query: '' } },
    { name: 'a command being typed', text: '/gen', want: { start: 0, end: 4, query: 'gen' } },
    { name: 'upper case is matched lower-cased', text: '/GEN', want: { start: 0, end: 4, query: 'gen' } },
    { name: 'at the start of a later line', text: 'Intro\n/generate-p', want: { start: 6, end: 17, query: 'generate-p' } },
    { name: 'caret inside the word', text: '/generate-prd', caret: 4, want: { start: 0, end: 4, query: 'gen' } },
    { name: 'not at the start of the line', text: 'see /gen', want: null },
    { name: 'indented', text: ' /gen', want: null },
    { name: 'a space after the command', text: '/gen ', want: null },
    { name: 'a path, not a command', text: '/usr/bin', want: null },
    { name: 'caret at the start', text: '/gen', caret: 0, want: null },
    { name: 'empty', text: '', want: null },
  ];
  for (const c of cases) it(c.name, () => expect(slashQuery(c.text, c.caret ?? c.text.length)).toEqual(c.want));
});

describe('filterCommands', () => {
  const names = (q: string) => filterCommands(q, COMMANDS).map((c) => c.command);
  it('lists all for an empty query', () => expect(names('')).toEqual(COMMANDS.map((c) => c.command)));
  it('matches a prefix of the command', () => expect(names('gen')).toHaveLength(4));
  it('narrows as the user types', () => expect(names('generate-p')).toEqual(['generate-prd']));
  it('matches the part after generate-', () => expect(names('qa')).toEqual(['generate-qa-test']));
  it('matches a word of the label', () => expect(names('record')).toEqual(['generate-decision']));
  it('matches nothing for an unknown command', () => expect(names('generate-poem')).toEqual([]));
  it('is case-insensitive', () => expect(names('PRD')).toEqual(['generate-prd']));
});

describe('removeSlash', () => {
  it('drops a line that held only the command, with its line break', () => {
    const text = 'Intro\n/gen\nMore';
    expect(removeSlash(text, slashQuery(text, 10)!)).toEqual({ text: 'Intro\nMore', caret: 6 });
  });
  it('drops the command at the end of the text', () => {
    const text = 'Intro\n/generate-prd';
    expect(removeSlash(text, slashQuery(text, text.length)!)).toEqual({ text: 'Intro\n', caret: 6 });
  });
  it('keeps text after the caret on the same line', () => {
    const text = '/genlogin page';
    expect(removeSlash(text, slashQuery(text, 4)!)).toEqual({ text: 'login page', caret: 0 });
  });
});
