// A minimal PDF 1.4 writer: one page per image, each page the size of its
// image, the image a JPEG (DCTDecode: PDF takes JPEG bytes as they are, so
// no compression code is needed). Plain TypeScript, no DOM.

/** PdfPage is one page: a JPEG of width × height pixels, drawn over a page of pageW × pageH points. */
export interface PdfPage {
  jpeg: Uint8Array;
  width: number;
  height: number;
  pageW: number;
  pageH: number;
}

/** POINTS_PER_PX is how a CSS pixel maps to a PDF point (96 px = 72 pt = one inch). */
export const POINTS_PER_PX = 0.75;

const num = (v: number) => (Math.round(v * 100) / 100).toString();

/** pdfOf writes the pages as a PDF document. */
export function pdfOf(pages: readonly PdfPage[]): Uint8Array {
  const enc = new TextEncoder();
  const chunks: Uint8Array[] = [];
  let size = 0;
  const offsets: number[] = [];
  const put = (b: Uint8Array | string) => {
    const bytes = typeof b === 'string' ? enc.encode(b) : b;
    chunks.push(bytes);
    size += bytes.length;
  };
  // Object n starts here (objects are numbered from 1).
  const begin = (n: number) => {
    offsets[n] = size;
    put(`${n} 0 obj\n`);
  };
  // A binary comment line after the header tells tools the file holds binary data.
  put('%PDF-1.4\n%\xe2\xe3\xcf\xd3\n');
  // 1: catalog, 2: pages, then per page 3 objects: page, contents, image.
  const pageObj = (i: number) => 3 + i * 3;
  begin(1);
  put('<< /Type /Catalog /Pages 2 0 R >>\nendobj\n');
  begin(2);
  put(`<< /Type /Pages /Kids [${pages.map((_, i) => `${pageObj(i)} 0 R`).join(' ')}] /Count ${pages.length} >>\nendobj\n`);
  pages.forEach((p, i) => {
    const n = pageObj(i);
    begin(n);
    put(`<< /Type /Page /Parent 2 0 R /MediaBox [0 0 ${num(p.pageW)} ${num(p.pageH)}] /Resources << /XObject << /Im0 ${n + 2} 0 R >> >> /Contents ${n + 1} 0 R >>\nendobj\n`);
    const draw = `q ${num(p.pageW)} 0 0 ${num(p.pageH)} 0 0 cm /Im0 Do Q`;
    begin(n + 1);
    put(`<< /Length ${draw.length} >>\nstream\n${draw}\nendstream\nendobj\n`);
    begin(n + 2);
    put(`<< /Type /XObject /Subtype /Image /Width ${p.width} /Height ${p.height} /ColorSpace /DeviceRGB /BitsPerComponent 8 /Filter /DCTDecode /Length ${p.jpeg.length} >>\nstream\n`);
    put(p.jpeg);
    put('\nendstream\nendobj\n');
  });
  const count = 3 + pages.length * 3;
  const xref = size;
  put(`xref\n0 ${count}\n0000000000 65535 f \n`);
  for (let n = 1; n < count; n++) put(`${String(offsets[n]).padStart(10, '0')} 00000 n \n`);
  put(`trailer\n<< /Size ${count} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`);
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}
