// The browser half of an export: SVG text to pixels (an <img> of the SVG
// drawn on a canvas), PNG and JPEG bytes, the PDF, the download.
import { pick, svgOf, type Picture, type Scheme, type Scope } from './picture';
import { pdfOf, POINTS_PER_PX, type PdfPage } from './pdf';
import { frameRect } from '../editor/structure';

/** Format is an image or document format of the export. */
export type Format = 'png' | 'svg' | 'pdf';

/** PNG_SCALE is the pixels per board pixel of a PNG and of a PDF's pages (sharp on high-density screens and in print). */
export const PNG_SCALE = 2;
/** MAX_SIDE and MAX_PIXELS keep a canvas within what browsers draw (Chromium: 16,384 px a side in practice, Firefox fewer pixels). */
export const MAX_SIDE = 16_384;
export const MAX_PIXELS = 60_000_000;

/** scaleFor is PNG_SCALE, less when the region would make a canvas too large to draw. */
export function scaleFor(w: number, h: number): number {
  return Math.min(PNG_SCALE, MAX_SIDE / w, MAX_SIDE / h, Math.sqrt(MAX_PIXELS / (w * h)));
}

/** xhtml serialises an HTML fragment as XHTML, which an SVG (XML) can hold. */
export function xhtml(html: string): string {
  const t = document.createElement('template');
  t.innerHTML = html;
  const s = new XMLSerializer();
  return [...t.content.childNodes].map((n) => s.serializeToString(n)).join('');
}

/** rasterise draws an SVG document of w × h board pixels on a canvas, scale pixels per board pixel. */
export async function rasterise(svg: string, w: number, h: number, scale: number): Promise<HTMLCanvasElement> {
  const img = new Image();
  // A data: URL, not a blob: one: an SVG with foreignObject drawn from it leaves the canvas readable.
  img.src = 'data:image/svg+xml;charset=utf-8,' + encodeURIComponent(svg);
  await img.decode();
  const canvas = document.createElement('canvas');
  canvas.width = Math.max(1, Math.round(w * scale));
  canvas.height = Math.max(1, Math.round(h * scale));
  canvas.getContext('2d')!.drawImage(img, 0, 0, canvas.width, canvas.height);
  return canvas;
}

function blobOf(canvas: HTMLCanvasElement, type: string, quality?: number): Promise<Blob> {
  return new Promise((resolve, reject) => canvas.toBlob((b) => (b ? resolve(b) : reject(new Error('The picture is too large for this browser to draw.'))), type, quality));
}

/** Exported is an export's file. */
export interface Exported {
  blob: Blob;
  /** width and height are the file's size in pixels (PNG), CSS pixels (SVG) or points (PDF, its first page). */
  width: number;
  height: number;
}

/** exportFile draws what scope picks from the picture in a format; null when there is nothing to draw. pdfPerFrame makes a PDF page of each frame. */
export async function exportFile(p: Picture, scope: Scope, format: Format, scheme: Scheme, pdfPerFrame = false): Promise<Exported | null> {
  if (format === 'pdf') return pdfFile(p, scope, scheme, pdfPerFrame);
  const got = pick(p, scope);
  if (!got) return null;
  const svg = svgOf(got.picture, got.region, scheme, xhtml);
  const w = Math.ceil(got.region.w);
  const h = Math.ceil(got.region.h);
  if (format === 'svg') return { blob: new Blob([svg], { type: 'image/svg+xml' }), width: w, height: h };
  const canvas = await rasterise(svg, w, h, scaleFor(w, h));
  return { blob: await blobOf(canvas, 'image/png'), width: canvas.width, height: canvas.height };
}

async function pdfFile(p: Picture, scope: Scope, scheme: Scheme, perFrame: boolean): Promise<Exported | null> {
  // Frames from the top left, row by row (the order people read a board in).
  const frames = [...p.frames].sort((a, b) => frameRect(a).y - frameRect(b).y || frameRect(a).x - frameRect(b).x);
  const scopes: Scope[] = perFrame && frames.length ? frames.map((f) => ({ kind: 'frame', id: f.id })) : [scope];
  const pages: PdfPage[] = [];
  for (const s of scopes) {
    const got = pick(p, s);
    if (!got) continue;
    const w = Math.ceil(got.region.w);
    const h = Math.ceil(got.region.h);
    const canvas = await rasterise(svgOf(got.picture, got.region, scheme, xhtml), w, h, scaleFor(w, h));
    const jpeg = new Uint8Array(await (await blobOf(canvas, 'image/jpeg', 0.92)).arrayBuffer());
    pages.push({ jpeg, width: canvas.width, height: canvas.height, pageW: w * POINTS_PER_PX, pageH: h * POINTS_PER_PX });
  }
  if (!pages.length) return null;
  return { blob: new Blob([pdfOf(pages) as BlobPart], { type: 'application/pdf' }), width: pages[0].pageW, height: pages[0].pageH };
}

/** download saves a blob as a file named name (the browser's download). */
export function download(blob: Blob, name: string): void {
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  // After the click has handed the file to the browser.
  setTimeout(() => URL.revokeObjectURL(a.href), 60_000);
}

/** fileName makes a file name of a board's name (characters file systems refuse replaced). */
export function fileName(name: string, ext: string): string {
  const base = name.replace(/[\\/:*?"<>|\u0000-\u001f]+/g, ' ').trim().slice(0, 120) || 'board';
  return `${base}.${ext}`;
}
