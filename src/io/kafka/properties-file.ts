/**
 * Java-properties text (the format of Kafka's `--command-config` and `kcat -F` files):
 * `name=value`, `name: value` or `name value` per logical line, `#` and `!` comments, a
 * trailing backslash continuing a line, and the escapes \t \n \r \f \\ \uXXXX. Duplicate
 * names keep the last value, as java.util.Properties does.
 */

export interface PropertyEntry {
  name: string;
  value: string;
  /** 1-based line where the entry starts, for diagnostics that never show values. */
  line: number;
}

/** The entries of a properties text, in file order, later duplicates replacing earlier ones. */
export function parseProperties(text: string): PropertyEntry[] {
  const byName = new Map<string, PropertyEntry>();
  for (const entry of propertyEntries(text)) {
    byName.delete(entry.name);
    byName.set(entry.name, entry);
  }
  return [...byName.values()];
}

/** Every entry of a properties text in file order, duplicates included (for a reader that refuses them). */
export function propertyEntries(text: string): PropertyEntry[] {
  const entries: PropertyEntry[] = [];
  for (const { text: logical, line } of logicalLines(text)) {
    const trimmed = logical.replace(/^[ \t\f]+/, '');
    if (trimmed === '' || trimmed.startsWith('#') || trimmed.startsWith('!')) continue;
    const raw = splitEntry(trimmed);
    entries.push({ name: unescapeProperty(raw.name), value: unescapeProperty(raw.value), line });
  }
  return entries;
}

/** Physical lines joined where one ends in an odd number of backslashes. */
function logicalLines(text: string): { text: string; line: number }[] {
  const physical = text.split(/\r\n|\r|\n/);
  const out: { text: string; line: number }[] = [];
  for (let i = 0; i < physical.length; i++) {
    const line = i + 1;
    let joined = physical[i] ?? '';
    while (endsInContinuation(joined) && i + 1 < physical.length) {
      i++;
      joined = joined.slice(0, -1) + (physical[i] ?? '').replace(/^[ \t\f]+/, '');
    }
    out.push({ text: joined, line });
  }
  return out;
}

function endsInContinuation(line: string): boolean {
  const trailing = /\\+$/.exec(line)?.[0].length ?? 0;
  return trailing % 2 === 1;
}

/** The name ends at the first unescaped `=`, `:` or whitespace; the separator's spaces go. */
function splitEntry(line: string): { name: string; value: string } {
  let i = 0;
  while (i < line.length) {
    const c = line[i];
    if (c === '\\') {
      i += 2;
      continue;
    }
    if (c === '=' || c === ':' || c === ' ' || c === '\t' || c === '\f') break;
    i++;
  }
  const name = line.slice(0, i);
  const rest = line.slice(i).replace(/^[ \t\f]*[=:]?[ \t\f]*/, '');
  return { name, value: rest };
}

const simpleEscapes: Record<string, string> = { t: '\t', n: '\n', r: '\r', f: '\f' };

function unescapeProperty(text: string): string {
  return text.replace(/\\(u[0-9a-fA-F]{4}|.)/g, (_, escaped: string) => {
    if (escaped.length === 5) return String.fromCharCode(Number.parseInt(escaped.slice(1), 16));
    return simpleEscapes[escaped] ?? escaped;
  });
}
