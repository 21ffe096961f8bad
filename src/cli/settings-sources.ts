/**
 * The settings of worker, relay and view from three sources that agree (docs/operations.md,
 * "Settings: flags, environment, file"): a flag (`--metrics-addr`), the environment
 * (`AMENDS_METRICS_ADDR`) and the settings file named by `--settings FILE` or AMENDS_SETTINGS
 * (`metrics-addr=…`). One rule for every setting: a flag beats the environment, the
 * environment beats the file, the file beats the default. The names follow one another: the
 * file's key is the flag's name, the variable is AMENDS_ and the name in capitals with
 * underscores. An empty variable counts as unset, as it always has.
 *
 * The file is Java-properties text like --kafka-config's (properties-file.ts): `key=value`
 * lines and `#` comments; a value may be `${env:NAME}` or `${file:PATH}`, so a secret (the
 * database URL) need not be written into it. A key no process takes, or a key given twice, is
 * a usage error naming the file and the line; a key only another role takes (the worker's
 * `batch-size`, read by a relay) is ignored, so one file serves all three.
 */
import { readFileSync } from 'node:fs';
import type { AnyFlags } from 'meow';
import { resolveReferences } from '../io/kafka/client-settings.js';
import { propertyEntries } from '../io/kafka/properties-file.js';
import { usageError } from '../kernel/amends-error.js';

/**
 * Every key the settings file may hold, and how the command receives it. `flag`: as its flag,
 * when no flag was given. `environment`: as its variable, beneath the real environment, because
 * the command reads that variable itself where it uses it, and there it may rank among other
 * sources (the Kafka client file's bootstrap.servers comes between --brokers and
 * AMENDS_BROKERS); the database URL has no flag, so that a password is never on a command line.
 */
export const settingKeys = {
  manifest: 'flag',
  'instance-id': 'flag',
  'outage-budget-s': 'flag',
  'batch-size': 'flag',
  'session-timeout-ms': 'flag',
  brokers: 'environment',
  'kafka-config': 'environment',
  'metrics-addr': 'environment',
  'log-level': 'environment',
  'database-url': 'environment',
  'database-schema': 'environment',
} as const;

type SettingKey = keyof typeof settingKeys;

/** `outage-budget-s` → `AMENDS_OUTAGE_BUDGET_S`. */
export function settingVariable(key: string): string {
  return `AMENDS_${key.toUpperCase().replaceAll('-', '_')}`;
}

/** meow's `outageBudgetS` → `outage-budget-s`. */
function settingKey(flag: string): string {
  return flag.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

function isSettingKey(key: string): key is SettingKey {
  return Object.hasOwn(settingKeys, key);
}

function nonEmpty(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}

interface FileSetting {
  value: string;
  /** `FILE line N: key`, for diagnostics (never the value). */
  where: string;
  line: number;
}

/** The file's settings by key, references resolved; unknown and repeated keys refused. */
export function readSettingsFile(path: string, env: NodeJS.ProcessEnv): Map<SettingKey, FileSetting> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw usageError(`--settings ${path}: cannot read the file (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  const settings = new Map<SettingKey, FileSetting>();
  for (const entry of propertyEntries(text)) {
    const where = `--settings ${path} line ${entry.line}`;
    if (!isSettingKey(entry.name)) {
      throw usageError(`${where}: unknown setting ${entry.name} (known: ${Object.keys(settingKeys).join(', ')})`);
    }
    const earlier = settings.get(entry.name);
    if (earlier !== undefined) {
      throw usageError(`${where}: ${entry.name} is set twice (also on line ${earlier.line}); keep one`);
    }
    const value = resolveReferences(entry.value, where, entry.name, env);
    settings.set(entry.name, { value, where: `${where}: ${entry.name}`, line: entry.line });
  }
  return settings;
}

export interface ResolvedSettings {
  /** The command's flags, each from its strongest source, defaults applied last. */
  flags: Record<string, unknown>;
  /** The environment the command runs with: the real one over the file's `environment` keys. */
  env: NodeJS.ProcessEnv;
}

/**
 * `given` are the flags as meow parsed them with no defaults applied (undefined: not on the
 * command line); `specs` the command's meow flags, defaults included.
 */
export function resolveSettings(specs: AnyFlags, given: Record<string, unknown>, env: NodeJS.ProcessEnv) {
  const path = nonEmpty(given.settings) ?? nonEmpty(env.AMENDS_SETTINGS);
  const file = path === undefined ? new Map<SettingKey, FileSetting>() : readSettingsFile(path, env);
  const runEnv: NodeJS.ProcessEnv = { ...env };
  for (const [key, setting] of file) {
    const variable = settingVariable(key);
    if (settingKeys[key] === 'environment' && nonEmpty(env[variable]) === undefined) runEnv[variable] = setting.value;
  }
  const flags: Record<string, unknown> = { ...given };
  for (const [name, spec] of Object.entries(specs)) {
    const key = settingKey(name);
    if (flags[name] !== undefined || !isSettingKey(key) || settingKeys[key] !== 'flag') continue;
    const variable = settingVariable(key);
    const fromEnv = nonEmpty(env[variable]);
    const fromFile = file.get(key);
    if (fromEnv !== undefined) flags[name] = typedValue(fromEnv, spec, variable);
    else if (fromFile !== undefined) flags[name] = typedValue(fromFile.value, spec, fromFile.where);
  }
  for (const [name, spec] of Object.entries(specs)) {
    const fallback = (spec as { default?: unknown }).default;
    if (flags[name] === undefined && fallback !== undefined) flags[name] = fallback;
  }
  return { flags, env: runEnv } satisfies ResolvedSettings;
}

/** A value as meow would have parsed it from the flag: numbers as numbers. */
function typedValue(text: string, spec: AnyFlags[string], where: string): unknown {
  if ((spec as { type?: string }).type !== 'number') return text.trim();
  const n = Number(text.trim());
  if (!Number.isFinite(n)) throw usageError(`${where}: expected a number, not ${JSON.stringify(text.trim())}`);
  return n;
}

/** The flags' specs without their defaults, so that what was not given stays undefined. */
export function withoutDefaults(specs: AnyFlags): AnyFlags {
  return Object.fromEntries(
    Object.entries(specs).map(([name, spec]) => {
      const { default: _default, ...rest } = spec as { default?: unknown };
      return [name, rest];
    }),
  ) as AnyFlags;
}
