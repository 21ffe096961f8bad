/**
 * The manifest of a new namespace over a source topic, as source-create and source-adopt both
 * print it (docs/design.md#manifest): the same flags checked the same way, the same `--config`
 * default, the same members in the same order, validated as every later reader validates it.
 * One function for both, so an adopted topic's manifest is indistinguishable from a created
 * one's and the rest of the tooling works unchanged.
 */
import {
  type ConfigFile,
  defaultConfigFile,
  type Manifest,
  parseConfigFile,
  parseManifest,
  validTopicName,
} from '../domain/config.js';
import { usageError } from '../kernel/amends-error.js';
import { readJsonFile } from './input-files.js';

/** What --config defaults to, in words: `widget@berlin on partition 0, origin 2026-03-01`. */
export const defaultConfigText = `${defaultConfigFile.stock_keys
  .map((k) => `${k.item}@${k.location} on partition ${'partition' in k ? k.partition : '?'}`)
  .join(', ')}, origin ${defaultConfigFile.ledger_origin}`;

/** The `--config` line of source-create's and source-adopt's help. */
export const configFlagHelp = `    --config FILE             JSON {ledger_origin, stock_keys, schema_version?}, or
                              version 2: {schema_version: 2, ledger_origin, partitioner
                              ("table" or "murmur2"), default_stock_key?, stock_keys}
                              (default: ${defaultConfigText});
                              fixtures/any-key.config.json takes any key, placed by
                              Kafka's default partitioner`;

/** A `--topic` flag value that is a legal Kafka topic name, or a usage error (exit 2). */
export function sourceTopicFlag(value: string): string {
  if (!validTopicName(value)) {
    throw usageError(`--topic ${JSON.stringify(value)} is not a legal Kafka topic name (1-249 of [a-zA-Z0-9._-])`);
  }
  return value;
}

/** The `--config FILE` read as JSON (not yet validated: that needs the partition count), or undefined. */
export async function readConfigFlag(path: string | undefined): Promise<unknown> {
  return path === undefined ? undefined : readJsonFile(path, 'config file');
}

/** The validated config file, or the default when `--config` was not given. */
export function configFileFor(raw: unknown, path: string | undefined, partitions: number): ConfigFile {
  if (path === undefined) return defaultConfigFile;
  return parseConfigFile(raw, partitions, `config file ${path}`);
}

export interface SourceManifestParts {
  namespace: string;
  topic: string;
  partitions: number;
  configFile: ConfigFile;
  /** `kafka:` + the topic's UUID, as the broker reported it. */
  incarnation: string;
}

/**
 * Built in docs/design.md#configuration's member order, then validated again as a whole: the
 * same checks every later reader of this manifest applies.
 */
export function sourceManifest(parts: SourceManifestParts): Manifest {
  const { namespace, topic, partitions, configFile, incarnation } = parts;
  return parseManifest({
    source_topic: topic,
    // The file's members (version 2's partitioner and default rule included) as it wrote them.
    config: { namespace, ...configFile, partitions, source_incarnation: incarnation },
  });
}
