import { describe, expect, it } from 'vitest';
import { codePoints, renderMarkdown } from './notes';

describe('renderMarkdown', () => {
  it('escapes raw HTML', () => {
    const html = renderMarkdown('<script>alert(1)</script><img src=x onerror=alert(1)>');
    expect(html).not.toContain('<script');
    expect(html).not.toContain('<img');
  });
  it('refuses javascript: links', () => {
    const html = renderMarkdown('[click](javascript:alert(1)) [ok](https://example.com)');
    expect(html).not.toContain('href="javascript:');
    expect(html).toContain('href="https://example.com"');
    expect(html).toContain('rel="noopener noreferrer nofollow"');
  });
  it('renders Markdown', () => {
    expect(renderMarkdown('**bold**')).toContain('<strong>bold</strong>');
  });
});

describe('codePoints', () => {
  it('counts code points, not UTF-16 units', () => {
    expect(codePoints('😀😀')).toBe(2);
    expect('😀😀'.length).toBe(4);
  });
});
