/**
 * Which fields two configurations differ in, in words (issue 35): a digest mismatch names
 * them (`partitions: 2 registered, 3 in the manifest`) instead of showing two hashes the user
 * cannot compare. Configurations are JSON values, compared member by member.
 */

/** At most this many differences are named; the rest are counted. */
const namedDifferencesMax = 3;
/** A value longer than this (a whole stock key) is cut, so the line stays readable. */
const valueCharsMax = 60;

interface Difference {
  path: string;
  was: unknown;
  is: unknown;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function differences(was: unknown, is: unknown, path: string, found: Difference[]): void {
  if (Array.isArray(was) && Array.isArray(is)) {
    if (was.length !== is.length) found.push({ path: `${path} (entries)`, was: was.length, is: is.length });
    for (let i = 0; i < Math.min(was.length, is.length); i += 1) differences(was[i], is[i], `${path}[${i}]`, found);
    return;
  }
  if (isRecord(was) && isRecord(is)) {
    const names = [...new Set([...Object.keys(was), ...Object.keys(is)])].sort();
    for (const name of names) differences(was[name], is[name], path === '' ? name : `${path}.${name}`, found);
    return;
  }
  if (JSON.stringify(was) !== JSON.stringify(is)) found.push({ path: path === '' ? '(whole)' : path, was, is });
}

function shown(value: unknown): string {
  if (value === undefined) return 'absent';
  const text = JSON.stringify(value);
  return text.length > valueCharsMax ? `${text.slice(0, valueCharsMax - 1)}…` : text;
}

/**
 * `field: A <wasLabel>, B <isLabel>` for each differing field, `; `-separated, the first few
 * named and the rest counted; empty when the two are equal as JSON.
 */
export function describeConfigDifferences(
  was: unknown,
  is: unknown,
  labels: { was: string; is: string } = { was: 'registered', is: 'in the manifest' },
): string {
  const found: Difference[] = [];
  differences(was, is, '', found);
  const named = found
    .slice(0, namedDifferencesMax)
    .map((d) => `${d.path}: ${shown(d.was)} ${labels.was}, ${shown(d.is)} ${labels.is}`);
  const more = found.length - named.length;
  return more > 0 ? `${named.join('; ')}; and ${more} more` : named.join('; ');
}
