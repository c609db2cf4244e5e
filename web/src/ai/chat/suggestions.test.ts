import { describe, expect, it } from 'vitest';
import { parseSuggestions, withoutSuggestionBlock } from './suggestions';

const block = (v: unknown) => '```json\n' + JSON.stringify(v) + '\n```';
const three = { suggestions: [1, 2, 3].map((i) => ({ label: `L${i}`, prompt: `P${i}` })) };

describe('parseSuggestions', () => {
  it('reads the last json block', () => {
    const old = { suggestions: [{ label: 'x', prompt: 'y' }] };
    const text = `Here is advice.\n\n${block(old)}\n\nMore.\n\n${block(three)}\n`;
    expect(parseSuggestions(text)).toEqual(three.suggestions);
  });

  it.each([
    ['no block', 'Just text'],
    ['two suggestions', block({ suggestions: three.suggestions.slice(0, 2) })],
    ['four suggestions', block({ suggestions: [...three.suggestions, { label: 'a', prompt: 'b' }] })],
    ['an empty label', block({ suggestions: [{ label: ' ', prompt: 'p' }, ...three.suggestions.slice(1)] })],
    ['an extra key', block({ suggestions: [{ label: 'a', prompt: 'b', x: 1 }, ...three.suggestions.slice(1)] })],
    ['a key beside suggestions', block({ ...three, more: true })],
    ['broken JSON', '```json\n{"suggestions": [\n```'],
    ['an unclosed block', '```json\n' + JSON.stringify(three)],
    ['a valid block followed by a broken last one', `${block(three)}\n${'```json\n{]\n```'}`],
  ])('gives nothing for %s', (_name, text) => {
    expect(parseSuggestions(text)).toBeNull();
  });
});

describe('withoutSuggestionBlock', () => {
  it('hides the suggestions, keeps other code blocks', () => {
    const text = 'Plan:\n\n```json\n{"a": 1}\n```\n\nNext:\n\n' + block(three);
    expect(withoutSuggestionBlock(text, false)).toBe('Plan:\n\n```json\n{"a": 1}\n```\n\nNext:');
  });

  it('hides a block still arriving while the answer streams, not after', () => {
    const partial = 'Advice.\n\n```json\n{"suggestions": [{"label": "In';
    expect(withoutSuggestionBlock(partial, true)).toBe('Advice.');
    expect(withoutSuggestionBlock(partial, false)).toBe(partial);
  });

  it('shows an invalid finished block as it is', () => {
    const text = 'x\n\n```json\n{"suggestions": []}\n```';
    expect(withoutSuggestionBlock(text, false)).toBe(text);
  });
});
