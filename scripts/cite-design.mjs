#!/usr/bin/env node
/**
 * Rewrites citations of the product contract in source comments into links to the design in
 * the project's own words: `(worker.md §6)` becomes `(docs/design.md#unknown-outcomes)`. The
 * contract's files (../shared/spec/*.md, ../shared/style.md) are not part of a clone, so a
 * comment citing them points nowhere for a newcomer; docs/design.md is.
 *
 *   node scripts/cite-design.mjs            rewrite src/**\/*.ts(x) in place, report what is left
 *   node scripts/cite-design.mjs --check    rewrite nothing; exit 1 if anything would change
 *
 * Only comments are touched (found with the TypeScript parser, so strings, templates and JSX
 * text stay as they are). Citations are mapped by pattern, never by line, so the script works
 * on files it has not seen, and it is idempotent: its output names no contract file. A
 * citation is
 *
 *   [../shared/spec/]FILE [§A[.a][, §B | –§B]...] [, | : | space]["]QUALIFIER["]
 *
 * FILE alone maps to its part of the design, each §N to its section (a range §A–§B to each
 * section in it), and a known QUALIFIER (a section's name: `Inspection`, `"Transient
 * outages"`) to its section, dropped from the text when it only named it. A `§N` without a
 * file belongs to the last domain.md or worker.md cited in the same comment. A line that
 * grows past biome's width is re-wrapped. What the script cannot map it leaves and reports,
 * with contract names outside comments (machine descriptions, messages, SQL: code, so they
 * stay). Every anchor of the table must be a heading of docs/design.md (GitHub's slug).
 * Exit status: 1 when an anchor has no heading, or when --check finds work; else 0.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

const design = 'docs/design.md';

/** Per spec file: its part's anchor, its numbered sections' anchors, and named qualifiers. */
const parts = {
  'domain.md': {
    anchor: 'domain',
    sections: {
      1: 'configuration',
      2: 'record-key',
      3: 'envelope',
      4: 'outcomes',
      5: 'output-versions',
      6: 'output-envelope',
      7: 'worked-example',
    },
    qualifiers: [],
  },
  'worker.md': {
    anchor: 'worker',
    sections: {
      1: 'manifest',
      2: 'source-validation',
      3: 'consumer',
      4: 'partition-lifecycle',
      5: 'store',
      6: 'unknown-outcomes',
      7: 'logs-and-exit',
    },
    qualifiers: [{ name: 'Transient outages', anchor: 'outages' }],
  },
  'transport.md': {
    anchor: 'transport',
    sections: {},
    qualifiers: [
      { name: 'Output binding', anchor: 'output-binding' },
      { name: 'Relay', anchor: 'relay' },
      { name: 'View', anchor: 'view' },
      { name: 'Inspection', anchor: 'inspection' },
      { name: 'Export', anchor: 'export' },
      { name: 'heartbeats', anchor: 'inspection', keep: true },
      { name: /'s (?:export members|member order)/, anchor: 'export', keep: true },
    ],
  },
  'verification.md': {
    anchor: 'verification',
    sections: {},
    qualifiers: [
      { name: 'Producer session guard', anchor: 'producer-guard' },
      { name: 'Bounded verifier', anchor: 'bounded-verifier' },
      { name: 'Rebuild namespaces', anchor: 'rebuild-namespaces' },
      { name: 'Showcase', anchor: 'showcase' },
      { name: /steps? \d/, anchor: 'bounded-verifier', keep: true },
      { name: /`verify --json`/, anchor: 'bounded-verifier', keep: true },
    ],
  },
  'cli.md': {
    anchor: 'commands',
    sections: {},
    qualifiers: [
      { name: 'source-load', anchor: 'source-load' },
      { name: 'simulate', anchor: 'simulate' },
    ],
  },
  'quality.md': {
    anchor: 'quality',
    sections: {},
    qualifiers: [
      { name: 'Dashboard', anchor: 'dashboard' },
      { name: 'Benchmarks', anchor: 'benchmarks' },
      { name: 'Scale run', anchor: 'scale-run' },
      { name: 'Integration', anchor: 'test-suites' },
      { name: 'a worker in the same process', anchor: 'dashboard', keep: true },
    ],
  },
  'library-notes.md': {
    anchor: 'library-facts',
    sections: {},
    qualifiers: [
      { name: 'ink 6.8', anchor: 'ink-and-meow' },
      { name: 'Admin', anchor: 'kafka-admin' },
      { name: '@confluentinc/kafka-javascript 1.10.1', anchor: 'kafka-client' },
      { name: /assign with (?:explicit )?offsets/, anchor: 'kafka-consumer', keep: true },
    ],
  },
  'style.md': { anchor: 'conventions', sections: {}, qualifiers: [] },
};

const fileNames = Object.keys(parts)
  .map((f) => f.replace(/[.-]/g, (c) => `\\${c}`))
  .join('|');
/** A line break inside a comment, with the next line's `*` or `//`. */
const lineBreak = String.raw`[ \t]*\r?\n[ \t]*(?:\*(?!/)|//)?[ \t]*`;
const gap = String.raw`(?:${lineBreak}|[ \t]+)`;
const section = String.raw`§\d+(?:\.\d+)?`;
const sectionList = String.raw`${section}(?:[ \t]*(?:,[ \t]*|–|-|[ \t]and[ \t]+)${section})*`;
/** A cited file with its sections, or sections alone (`§5`, not an RFC's), which belong to the file cited before. */
const citation = new RegExp(
  String.raw`(?<![\w/.-])(?:(?:\.\./)*(?:shared/)?(?:spec/)?)(?<file>${fileNames})(?:${gap}(?<sections>${sectionList}))?` +
    String.raw`|(?<!RFC \d+ )(?<bare>${sectionList})`,
  'g',
);

/** The anchors of a list of sections such as `§4.5, §6` or `§2–§4`, or undefined if one is unknown. */
function sectionAnchors(part, list) {
  const anchors = [];
  const numbers = [...list.matchAll(/§(\d+)(?:\.\d+)?/g)].map((m) => Number(m[1]));
  const ranges = [...list.matchAll(/§(\d+)(?:\.\d+)?[ \t]*[–-][ \t]*§(\d+)/g)].map((m) => [Number(m[1]), Number(m[2])]);
  const expanded = new Set(numbers);
  for (const [from, to] of ranges) for (let n = from; n <= to; n++) expanded.add(n);
  for (const n of [...expanded].sort((a, b) => a - b)) {
    const anchor = part.sections[n];
    if (anchor === undefined) return undefined;
    if (!anchors.includes(anchor)) anchors.push(anchor);
  }
  return anchors;
}

/** A known qualifier right after a citation: its anchor, and how much text it covers if dropped. */
function qualifierAt(part, rest) {
  const lead = new RegExp(`^(?:,|:)?(?:${gap})?("?)`).exec(rest);
  if (lead === null) return undefined;
  const after = rest.slice(lead[0].length);
  for (const q of part.qualifiers) {
    const match =
      typeof q.name === 'string' ? (after.startsWith(q.name) ? q.name : undefined) : q.name.exec(after)?.[0];
    if (match === undefined || (typeof q.name !== 'string' && !after.startsWith(match))) continue;
    if (/\w/.test(after[match.length] ?? '') && /\w$/.test(match)) continue;
    if (q.keep) return { anchor: q.anchor, length: 0 };
    const quote = lead[1];
    if (quote !== '' && after[match.length] !== quote) continue;
    return { anchor: q.anchor, length: lead[0].length + match.length + quote.length };
  }
  return undefined;
}

/** One comment rewritten; unmapped citations are pushed to `problems`. */
function rewriteComment(text, problems) {
  let out = '';
  let from = 0;
  let lastLinkEnd = -1;
  let cited; // the numbered part (domain, worker) last cited in this comment, for sections alone
  for (const m of text.matchAll(citation)) {
    if (m.index < from) continue;
    const { file, sections, bare } = m.groups;
    if (bare !== undefined && cited === undefined) {
      problems.push(`§ without a file: ${bare}`);
      continue;
    }
    const part = bare === undefined ? parts[file] : cited;
    if (Object.keys(part.sections).length > 0) cited = part;
    let anchors = sections === undefined && bare === undefined ? [part.anchor] : sectionAnchors(part, sections ?? bare);
    if (anchors === undefined) {
      problems.push(`unknown section: ${m[0]}`);
      continue;
    }
    const end = m.index + m[0].length;
    const qualifier = bare === undefined ? qualifierAt(part, text.slice(end)) : undefined;
    // A qualifier names the section of a file cited alone, and narrows a single cited section
    // to its named part (`worker.md §6 "Transient outages"`); a kept one only picks the anchor.
    if (qualifier !== undefined && (sections === undefined || (anchors.length === 1 && qualifier.length > 0))) {
      anchors = [qualifier.anchor];
    }
    // A citation right after another (`worker.md §1, cli.md`) names the design once.
    const between = text.slice(from, m.index);
    const follows = out.length > 0 && from === lastLinkEnd && /^[ \t]*[,;][ \t]*$/.test(between);
    const link = [follows ? `#${anchors[0]}` : `${design}#${anchors[0]}`, ...anchors.slice(1).map((a) => `#${a}`)].join(
      ', ',
    );
    out += between;
    // A line break inside the citation moves before it, so the comment keeps its lines.
    const consumed = text.slice(m.index, end + (qualifier?.length ?? 0));
    const lineBreakInside = new RegExp(lineBreak).exec(consumed)?.[0];
    const lastSpace = out.lastIndexOf(' ');
    const lineStart = out.lastIndexOf('\n') + 1;
    if (lineBreakInside !== undefined && /[^\s*/]/.test(out.slice(lineStart, lastSpace))) {
      out = out.slice(0, lastSpace) + lineBreakInside.replace(/^[ \t]*/, '') + out.slice(lastSpace + 1);
    }
    out += link;
    from = end + (qualifier?.length ?? 0);
    lastLinkEnd = from;
  }
  return out + text.slice(from);
}

/** Every comment of a file, as [pos, end) ranges (leading and trailing trivia of every token). */
function commentRanges(name, text) {
  const kind = name.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS;
  const source = ts.createSourceFile(name, text, ts.ScriptTarget.Latest, true, kind);
  const found = new Map();
  const jsxTexts = [];
  const visit = (node) => {
    if (node.kind === ts.SyntaxKind.JsxText) jsxTexts.push([node.pos, node.end]);
    const ranges = [
      ...(ts.getLeadingCommentRanges(text, node.pos) ?? []),
      ...(ts.getTrailingCommentRanges(text, node.end) ?? []),
    ];
    for (const r of ranges) found.set(r.pos, r.end);
    for (const child of node.getChildren(source)) visit(child);
  };
  visit(source);
  // Trivia scanned from the edge of JSX text is not a comment: it is the text.
  return [...found].filter(([pos]) => !jsxTexts.some(([a, b]) => pos >= a && pos < b)).sort((a, b) => a[0] - b[0]);
}

const specMention = new RegExp(String.raw`(?<![\w/.-])(?:${fileNames})|shared/spec|\.\./shared`, 'g');

function rewriteFile(name, text, report) {
  let out = '';
  let from = 0;
  for (const [pos, end] of commentRanges(name, text)) {
    const problems = [];
    const comment = rewriteComment(text.slice(pos, end), problems);
    out += text.slice(from, pos) + comment;
    from = end;
    for (const p of problems) report.push(`${name}:${lineOf(text, pos)}: ${p}`);
    for (const left of comment.matchAll(specMention))
      report.push(`${name}:${lineOf(text, pos)}: left as is: ${left[0]}`);
  }
  const rewritten = wrapLongLines(out + text.slice(from));
  const comments = commentRanges(name, rewritten);
  for (const m of rewritten.matchAll(specMention)) {
    if (!comments.some(([a, b]) => m.index >= a && m.index < b)) {
      report.push(`${name}:${lineOf(rewritten, m.index)}: not in a comment, left as is: ${m[0]}`);
    }
  }
  return rewritten;
}

const lineWidth = 120; // biome.json's
/** Where a wrapped line is broken: the width most comments here are written to. */
const wrapWidth = 100;

/**
 * A link makes a comment line longer: a line that cites the design and passes biome's width is
 * broken at its last space within `wrapWidth`, the rest carried into the next line of the same
 * paragraph (or a new line), and so on down; a one-line JSDoc comment becomes three lines.
 */
function wrapLongLines(text) {
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].length <= lineWidth || !lines[i].includes(`${design}#`)) continue;
    const single = /^(\s*)\/\*\* (.*) \*\/$/.exec(lines[i]);
    if (single !== null) {
      lines.splice(i, 1, `${single[1]}/**`, `${single[1]} * ${single[2]}`, `${single[1]} */`);
      i += 1;
    }
    for (let j = i; j < lines.length && lines[j].length > wrapWidth; j++) {
      const prefix = /^\s*(?:\* |\/\/ )/.exec(lines[j])?.[0];
      const cut = lines[j].lastIndexOf(' ', wrapWidth);
      if (prefix === undefined || cut <= prefix.length) break;
      const rest = lines[j].slice(cut + 1);
      lines[j] = lines[j].slice(0, cut);
      const next = lines[j + 1];
      // The next line continues the paragraph when it has the same prefix and plain text.
      const continues =
        next?.startsWith(prefix) &&
        /^[^\s\-*|`]/.test(next.slice(prefix.length)) &&
        !/\d+\.\s/.test(next.slice(prefix.length, prefix.length + 4));
      if (continues) lines[j + 1] = `${prefix}${rest} ${next.slice(prefix.length)}`;
      else lines.splice(j + 1, 0, `${prefix}${rest}`);
    }
  }
  return lines.join('\n');
}

function lineOf(text, index) {
  return text.slice(0, index).split('\n').length;
}

function sourceFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(entry.name) ? [path] : [];
  });
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
function slugOf(heading) {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

const root = join(import.meta.dirname, '..');
const check = process.argv.includes('--check');
const report = [];
// Every anchor of the table must be a heading of the design, or the links would point nowhere.
const headings = new Set(
  [...readFileSync(join(root, design), 'utf8').matchAll(/^#{1,6} (.+)$/gm)].map((m) => slugOf(m[1])),
);
for (const part of Object.values(parts)) {
  const anchors = [part.anchor, ...Object.values(part.sections), ...part.qualifiers.map((q) => q.anchor)];
  for (const anchor of anchors) if (!headings.has(anchor)) report.push(`${design}: no heading for #${anchor}`);
}
let changed = 0;
for (const path of sourceFiles(join(root, 'src'))) {
  const name = relative(root, path);
  const text = readFileSync(path, 'utf8');
  const rewritten = rewriteFile(name, text, report);
  if (rewritten === text) continue;
  changed += 1;
  if (!check) writeFileSync(path, rewritten);
}
for (const line of report) console.log(line);
console.log(`${changed} file(s) ${check ? 'would change' : 'rewritten'}; ${report.length} citation(s) left to look at`);
const missingHeading = report.some((line) => line.startsWith(`${design}:`));
process.exitCode = missingHeading || (check && changed > 0) ? 1 : 0;
