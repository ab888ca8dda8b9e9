import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { Language, Parser, type Tree } from 'web-tree-sitter';
import { commandHazards } from '../../shared/command-hazards';
import type { CommandHazard } from '../../shared/schemas/approval';

/*
 * Bash read with tree-sitter's grammar, compiled to wasm and shipped in its npm package: nothing is
 * fetched or built at run time. The wasm files are read as bytes so they load from Electron's asar too.
 */

const require = createRequire(import.meta.url);
let parser: Promise<Parser> | undefined;

async function loadParser(): Promise<Parser> {
  const runtime = await readFile(require.resolve('web-tree-sitter/web-tree-sitter.wasm'));
  await Parser.init({ wasmBinary: runtime });
  const bash = await Language.load(await readFile(require.resolve('tree-sitter-bash/tree-sitter-bash.wasm')));
  return new Parser().setLanguage(bash);
}

/** The dangerous parts of a shell command, read from its syntax tree. */
export async function readCommandHazards(command: string): Promise<CommandHazard[]> {
  const bash = await (parser ??= loadParser());
  const trees: Tree[] = [];
  try {
    return commandHazards(command, (text) => {
      const tree = bash.parse(text);
      if (tree) trees.push(tree);
      return tree?.rootNode ?? null;
    });
  } finally {
    for (const tree of trees) tree.delete();
  }
}
