import { readFile, stat } from 'node:fs/promises';
import { extname, join, normalize, sep } from 'node:path';

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.woff2': 'font/woff2',
};

export interface StaticFile {
  body: Buffer;
  contentType: string;
  isHtml: boolean;
}

/** Resolves a URL path inside `root` (never outside it); unknown paths fall back to index.html. */
export async function readStaticFile(root: string, urlPath: string): Promise<StaticFile | null> {
  const relative = normalize(decodeURIComponent(urlPath)).replace(/^([/\\])+/, '');
  const candidate = join(root, relative);
  const inside = candidate === root || candidate.startsWith(root + sep);
  const target = inside && relative !== '' && (await isFile(candidate)) ? candidate : join(root, 'index.html');
  if (!(await isFile(target))) return null;
  const extension = extname(target);
  return {
    body: await readFile(target),
    contentType: CONTENT_TYPES[extension] ?? 'application/octet-stream',
    isHtml: extension === '.html',
  };
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}
