/**
 * The source layout a newcomer relies on (style.md, issues 18 and 31): src's top level is the
 * architecture — the pure core (kernel, domain, machines), the I/O edge `io/` with one room per
 * adapter, and what is built on them; a room imports only rooms below it; the pure rooms import
 * no I/O; no function is longer than 80 lines except the named declarative literals.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const src = join(import.meta.dirname, '..', '..', 'src');

/** Lower rank first; a room may import only rooms of a lower rank (or itself). */
const roomRanks: Record<string, number> = {
  kernel: 0,
  domain: 1,
  machines: 2,
  'io/process': 3,
  'io/store': 4,
  'io/kafka': 4,
  'io/worker': 5,
  'io/transport': 6,
  verify: 7,
  showcase: 8,
  tui: 9,
  bench: 9,
  cli: 10,
};
const pureRooms = new Set(['kernel', 'domain', 'machines']);
/** Packages the pure rooms may import: the statechart library and deterministic hashing. */
const pureImports = new Set(['xstate', 'node:crypto']);
const functionLinesMax = 80;
/** Declarative literals allowed past the limit: `file:function` (issue 18 names the kind). */
const longLiterals = new Set<string>([]);
/** A file is read in one sitting (style.md: a few hundred lines); issue 31 cut the two that were not. */
const fileLinesMax = 400;
/** Files allowed past the limit, each with what it is: none may be added without a reason. */
const longFiles: Readonly<Record<string, string>> = {};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(entry.name) ? [path] : [];
  });
}

/** The I/O edge: its rooms are its folders (`io/store`), and nothing lies loose in it. */
const ioEdge = 'io';

/** The room of a path relative to src: its first folder, or its first two under the I/O edge. */
function roomOf(name: string): string {
  const parts = name.split('/');
  return parts[0] === ioEdge && parts.length > 2 ? `${ioEdge}/${parts[1]}` : (parts[0] ?? '');
}

const files = sourceFiles(src).map((path) => {
  const text = readFileSync(path, 'utf8');
  const name = relative(src, path);
  return {
    name,
    room: roomOf(name),
    source: ts.createSourceFile(name, text, ts.ScriptTarget.Latest, true),
  };
});

function importsOf(source: ts.SourceFile): string[] {
  return source.statements.flatMap((s) =>
    (ts.isImportDeclaration(s) || ts.isExportDeclaration(s)) &&
    s.moduleSpecifier !== undefined &&
    ts.isStringLiteral(s.moduleSpecifier)
      ? [s.moduleSpecifier.text]
      : [],
  );
}

/** The room a relative import lands in, or undefined for a package. */
function importedRoom(fileName: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  return roomOf(relative(src, join(src, fileName, '..', specifier)));
}

describe('source layout', () => {
  it('has only the rooms, each file inside one', () => {
    const rooms = new Set(files.map((f) => f.room));
    expect([...rooms].filter((r) => !(r in roomRanks))).toEqual([]);
    expect(files.filter((f) => !f.name.includes('/')).map((f) => f.name)).toEqual([]);
  });

  it('puts every adapter room under the I/O edge, and only adapter rooms', () => {
    const ioRooms = Object.keys(roomRanks).filter((r) => r.startsWith(`${ioEdge}/`));
    expect(ioRooms.sort()).toEqual(['io/kafka', 'io/process', 'io/store', 'io/transport', 'io/worker']);
    expect(files.filter((f) => f.room === ioEdge).map((f) => f.name)).toEqual([]);
  });

  it('imports only downward; the pure rooms import no I/O', () => {
    const upward: string[] = [];
    const impure: string[] = [];
    for (const f of files) {
      for (const specifier of importsOf(f.source)) {
        const room = importedRoom(f.name, specifier);
        if (room === undefined) {
          if (pureRooms.has(f.room) && !pureImports.has(specifier)) impure.push(`${f.name} imports ${specifier}`);
        } else if (room !== f.room && !((roomRanks[room] ?? 99) < (roomRanks[f.room] ?? -1))) {
          upward.push(`${f.name} imports ${specifier}`);
        }
      }
    }
    expect(upward).toEqual([]);
    expect(impure).toEqual([]);
  });

  it('keeps the showcase out of the production worker command (its fault hooks are injected)', () => {
    const worker = files.find((f) => f.name === join('cli', 'commands', 'worker.ts'));
    expect(worker).toBeDefined();
    const fromShowcase = importsOf(worker?.source as ts.SourceFile).filter(
      (specifier) => importedRoom(worker?.name as string, specifier) === 'showcase',
    );
    expect(fromShowcase).toEqual([]);
  });

  it(`has no file over ${fileLinesMax} lines but the named ones`, () => {
    const long = files
      .map((f) => ({ name: f.name, lines: lineOf(f.source, f.source.end) }))
      .filter((f) => f.lines > fileLinesMax && !(f.name in longFiles))
      .map((f) => `${f.name} (${f.lines} lines)`);
    expect(long).toEqual([]);
  });

  it(`has no function over ${functionLinesMax} lines but the named declarative literals`, () => {
    const long: string[] = [];
    for (const { name, source } of files) {
      const visit = (node: ts.Node): void => {
        if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
          const lines = lineOf(source, node.end) - lineOf(source, node.getStart(source)) + 1;
          const id = `${name}:${functionName(node, source)}`;
          if (lines > functionLinesMax && !longLiterals.has(id)) long.push(`${id} (${lines} lines)`);
        }
        ts.forEachChild(node, visit);
      };
      visit(source);
    }
    expect(long).toEqual([]);
  });

  it('cites the design in docs/design.md, never the contract files a clone lacks', () => {
    // Only a file that names the contract somewhere needs its comments found (the slow part).
    const naming = files.filter(({ source }) => contractMention.test(source.getFullText()));
    const citing = naming.flatMap(({ name, source }) =>
      commentsOf(source)
        .filter((comment) => contractMention.test(comment))
        .map((comment) => `${name}: ${comment.match(contractMention)?.[0]}`),
    );
    expect(citing).toEqual([]);
  });
});

/** The contract's files live outside the repository (../shared); scripts/cite-design.mjs maps them. */
const contractMention =
  /\.\.\/shared|shared\/spec|(?<![\w/.-])(?:domain|worker|transport|verification|quality|cli|library-notes|style)\.md/;

/** Every comment of a file: the leading and trailing trivia of every token, none inside JSX text. */
function commentsOf(source: ts.SourceFile): string[] {
  const text = source.getFullText();
  const found = new Map<number, string>();
  const jsxTexts: ts.Node[] = [];
  const visit = (node: ts.Node): void => {
    if (node.kind === ts.SyntaxKind.JsxText) jsxTexts.push(node);
    const ranges = [
      ...(ts.getLeadingCommentRanges(text, node.pos) ?? []),
      ...(ts.getTrailingCommentRanges(text, node.end) ?? []),
    ];
    for (const range of ranges) found.set(range.pos, text.slice(range.pos, range.end));
    for (const child of node.getChildren(source)) visit(child);
  };
  visit(source);
  return [...found].filter(([pos]) => !jsxTexts.some((j) => pos >= j.pos && pos < j.end)).map(([, comment]) => comment);
}

function lineOf(source: ts.SourceFile, position: number): number {
  return source.getLineAndCharacterOfPosition(position).line;
}

function functionName(node: ts.SignatureDeclaration, source: ts.SourceFile): string {
  if (node.name !== undefined) return node.name.getText(source);
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) return parent.name.getText(source);
  return `(anonymous at line ${lineOf(source, node.getStart(source)) + 1})`;
}
