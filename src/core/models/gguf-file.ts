import { closeSync, openSync, readSync } from 'node:fs';

export const GGUF_EXTENSION = '.gguf';

const MAGIC = Buffer.from('GGUF', 'ascii');

/** Whether the file starts with GGUF's magic bytes; a file that cannot be read is not one. */
export function hasGgufMagic(file: string): boolean {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return false;
  }
  try {
    const head = Buffer.alloc(MAGIC.length);
    return readSync(fd, head, 0, head.length, 0) === MAGIC.length && head.equals(MAGIC);
  } finally {
    closeSync(fd);
  }
}
