/**
 * The librdkafka security settings of --kafka-config as kafkajs options, for the one path
 * that still goes through kafkajs (DescribeConfigs, topic-config.ts; docs/design.md#library-facts).
 * Only what decides how a connection is made matters to kafkajs: security.protocol, the
 * SASL mechanism and credentials, and the TLS trust, client certificate and verification.
 * Other librdkafka properties (timeouts, buffers) have no kafkajs counterpart and are
 * ignored here; a mechanism kafkajs cannot do is a usage error rather than a silent
 * plaintext connection.
 */
import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from 'node:tls';
import type { SASLOptions } from 'kafkajs';
import { usageError } from '../../kernel/amends-error.js';
import type { KafkaClientSettings } from './client-settings.js';

export interface KafkajsSecurity {
  ssl?: ConnectionOptions;
  sasl?: SASLOptions;
}

type Protocol = 'plaintext' | 'ssl' | 'sasl_plaintext' | 'sasl_ssl';

export function kafkajsSecurity(settings: KafkaClientSettings): KafkajsSecurity {
  const p = settings.properties;
  const protocol = (p['security.protocol'] ?? 'plaintext').toLowerCase() as Protocol;
  const security: KafkajsSecurity = {};
  if (protocol === 'ssl' || protocol === 'sasl_ssl') security.ssl = tlsOptions(settings);
  if (protocol === 'sasl_plaintext' || protocol === 'sasl_ssl') security.sasl = saslOptions(settings);
  return security;
}

function tlsOptions(settings: KafkaClientSettings): ConnectionOptions {
  const p = settings.properties;
  const options: ConnectionOptions = {};
  const ca = pemOf(settings, 'ssl.ca.pem', 'ssl.ca.location');
  if (ca !== undefined) options.ca = ca;
  const cert = pemOf(settings, 'ssl.certificate.pem', 'ssl.certificate.location');
  if (cert !== undefined) options.cert = cert;
  const key = pemOf(settings, 'ssl.key.pem', 'ssl.key.location');
  if (key !== undefined) options.key = key;
  if (p['ssl.key.password'] !== undefined) options.passphrase = p['ssl.key.password'];
  if (p['enable.ssl.certificate.verification'] === 'false') options.rejectUnauthorized = false;
  // librdkafka checks the broker's host name by default (`https`); `none` turns only that off.
  if (p['ssl.endpoint.identification.algorithm'] === 'none') options.checkServerIdentity = () => undefined;
  return options;
}

/** An inline PEM property, or the file a `.location` property names. */
function pemOf(settings: KafkaClientSettings, inline: string, location: string): string | undefined {
  const p = settings.properties;
  if (p[inline] !== undefined) return p[inline];
  const path = p[location];
  if (path === undefined) return undefined;
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'error';
    throw usageError(`--kafka-config ${settings.file}: ${location} ${path} cannot be read (${code})`);
  }
}

function saslOptions(settings: KafkaClientSettings): SASLOptions {
  const p = settings.properties;
  const mechanism = (p['sasl.mechanism'] ?? p['sasl.mechanisms'] ?? 'GSSAPI').toUpperCase();
  const username = p['sasl.username'] ?? '';
  const password = p['sasl.password'] ?? '';
  switch (mechanism) {
    case 'PLAIN':
      return { mechanism: 'plain', username, password };
    case 'SCRAM-SHA-256':
      return { mechanism: 'scram-sha-256', username, password };
    case 'SCRAM-SHA-512':
      return { mechanism: 'scram-sha-512', username, password };
    default:
      throw usageError(
        `--kafka-config ${settings.file}: sasl.mechanism ${mechanism} is not supported by amends' topic-configuration reader (kafkajs): use PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512`,
      );
  }
}
