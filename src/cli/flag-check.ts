/**
 * The usage checks meow leaves to us (docs/design.md#commands): an unknown flag named as the user typed it,
 * a missing required flag and a stray argument, the same one line for every command.
 */
import type { AnyFlags } from 'meow';
import { usageError } from '../kernel/amends-error.js';

/** The names a command's flags may be given by (camelCase, kebab-case, short, aliases). */
function knownNames(flags: AnyFlags): Set<string> {
  const known = new Set(['help', 'version']);
  for (const [name, f] of Object.entries(flags)) {
    known.add(name);
    known.add(flagName(name).slice(2));
    const spec = f as { shortFlag?: string; aliases?: string[] };
    if (spec.shortFlag) known.add(spec.shortFlag);
    for (const a of spec.aliases ?? []) known.add(a);
  }
  return known;
}

/**
 * The argument that gave meow's flag `key`, as typed (`--Bogus`, `-x`), without any
 * `=value`. meow hands back keys in its own spelling (`--Bogus` becomes `bogus`), so names
 * are compared without case or dashes.
 */
function typedAs(key: string, argv: readonly string[]): string {
  const wanted = loose(key);
  for (const arg of argv) {
    if (arg === '--') break;
    const name = arg.split('=', 1)[0] ?? arg;
    if (name.startsWith('--') && (loose(name) === wanted || loose(name) === `no${wanted}`)) return name;
    if (/^-[^-]/.test(name) && key.length === 1 && name.includes(key)) return `-${key}`;
  }
  return key.length === 1 ? `-${key}` : `--${key}`;
}

function loose(name: string): string {
  return name.replace(/[-_]/g, '').toLowerCase();
}

/** The unknown flags among meow's parsed ones, each as the user typed it. */
export function unknownFlags(flags: AnyFlags, parsed: Record<string, unknown>, argv: readonly string[]): string[] {
  const known = knownNames(flags);
  return Object.keys(parsed)
    .filter((k) => !known.has(k) && !known.has(camelCase(k)))
    .map((k) => typedAs(k, argv));
}

/** The required flags the user did not give (an empty string counts as not given), as `--kebab-case`. */
export function missingFlags(flags: AnyFlags, values: Record<string, unknown>): string[] {
  return Object.entries(flags)
    .filter(([, f]) => (f as { isRequired?: unknown }).isRequired === true)
    .filter(([name]) => values[name] === undefined || values[name] === '')
    .map(([name]) => flagName(name));
}

/** One line for the missing flags: "--manifest is required", "--manifest and --what are required". */
export function missingFlagsMessage(names: readonly string[]): string {
  if (names.length === 1) return `${names[0]} is required`;
  return `${names.slice(0, -1).join(', ')} and ${names.at(-1)} are required`;
}

/** A command that takes no positional arguments refuses the first one it was given. */
export function refuseArguments(input: readonly string[]): void {
  if (input.length > 0) throw usageError(`unexpected argument ${JSON.stringify(input[0])}`);
}

/** Whether the arguments ask for help or the version (before a `--`, which ends the flags). */
export function asksFor(argv: readonly string[]): 'help' | 'version' | undefined {
  for (const arg of argv) {
    if (arg === '--') return undefined;
    if (arg === '-h' || arg === '--help') return 'help';
    if (arg === '--version') return 'version';
  }
  return undefined;
}

function camelCase(name: string): string {
  return name.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/** How a user types meow's flag `name`: `deliveryTimeoutMs` → `--delivery-timeout-ms`. */
export function flagName(name: string): string {
  return `--${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
}

/**
 * `--file -` as `--file=-`: meow (yargs-parser) takes a lone `-` for a positional, not for
 * the flag's value, and `-` is how a user names standard input (input-files.ts).
 */
export function joinDashValues(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--') return [...out, ...argv.slice(i)];
    if (/^--[^=]+$/.test(arg) && argv[i + 1] === '-') {
      out.push(`${arg}=-`);
      i++;
    } else out.push(arg);
  }
  return out;
}
