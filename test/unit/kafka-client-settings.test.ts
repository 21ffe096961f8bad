// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${env:…} and ${file:…} are the literal syntax under test
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadKafkaClientSettings } from '../../src/io/kafka/client-settings.js';
import { kafkajsSecurity } from '../../src/io/kafka/kafkajs-security.js';
import { parseProperties } from '../../src/io/kafka/properties-file.js';
import { AmendsError } from '../../src/kernel/amends-error.js';

const dir = mkdtempSync(join(tmpdir(), 'amends-kafka-config-'));
let n = 0;
function file(text: string): string {
  const path = join(dir, `client-${n++}.properties`);
  writeFileSync(path, text);
  return path;
}

function refusal(text: string, env: NodeJS.ProcessEnv = {}): AmendsError {
  try {
    loadKafkaClientSettings(file(text), env);
  } catch (error) {
    expect(error).toBeInstanceOf(AmendsError);
    return error as AmendsError;
  }
  throw new Error('the settings were accepted');
}

describe('properties file', () => {
  it('reads =, : and space separators, comments, continuations and escapes; the last duplicate wins', () => {
    const entries = parseProperties(
      '# comment\n! also\n  a = 1\nb:2\nc 3\nd=long \\\n    value\ne=tab\\tand\\u0041\na=4\n\n',
    );
    expect(entries.map((e) => [e.name, e.value, e.line])).toEqual([
      ['b', '2', 4],
      ['c', '3', 5],
      ['d', 'long value', 6],
      ['e', 'tab\tandA', 8],
      ['a', '4', 9],
    ]);
  });
});

describe('--kafka-config', () => {
  it('is off without the flag and the variable', () => {
    expect(loadKafkaClientSettings(undefined, {})).toEqual({ properties: {}, file: null });
  });

  it('resolves ${env:NAME} and ${file:PATH}, the flag winning over AMENDS_KAFKA_CONFIG', () => {
    const secret = file('s3cret\n');
    const chosen = file(`security.protocol=SASL_SSL\nsasl.username=\${env:USER_X}\nsasl.password=\${file:${secret}}\n`);
    const other = file('security.protocol=SSL\n');
    const settings = loadKafkaClientSettings(chosen, { USER_X: 'amends', AMENDS_KAFKA_CONFIG: other });
    expect(settings.properties).toEqual({
      'security.protocol': 'SASL_SSL',
      'sasl.username': 'amends',
      'sasl.password': 's3cret',
    });
    expect(loadKafkaClientSettings(undefined, { AMENDS_KAFKA_CONFIG: other }).properties).toEqual({
      'security.protocol': 'SSL',
    });
  });

  it('refuses an unknown property, an invalid value, an owned property and a missing reference: usage errors', () => {
    expect(refusal('no.such.thing=1\n').message).toMatch(/unknown librdkafka property no\.such\.thing$/);
    const invalid = refusal('security.protocol=${env:P}\n', { P: 'topsecretvalue' });
    expect(invalid.message).toMatch(/invalid value for property security\.protocol$/);
    expect(invalid.message).not.toContain('topsecretvalue');
    expect(refusal('x=1\nenable.auto.commit=true\n').message).toMatch(
      /line 2: property enable\.auto\.commit is set by amends/,
    );
    expect(refusal('sasl.password=${env:NOT_SET}\n').message).toMatch(/\$\{env:NOT_SET\}, which is not set$/);
    for (const error of [invalid, refusal('group.id=x\n'), refusal('a.b=${file:/no/such/file}\n')]) {
      expect(error.code).toBe('usage');
    }
  });

  it('gives kafkajs the same SASL and TLS settings', () => {
    const ca = file('-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n');
    const settings = loadKafkaClientSettings(
      file(
        `security.protocol=sasl_ssl\nsasl.mechanism=SCRAM-SHA-512\nsasl.username=u\nsasl.password=p\nssl.ca.location=${ca}\nssl.endpoint.identification.algorithm=none\n`,
      ),
      {},
    );
    const security = kafkajsSecurity(settings);
    expect(security.sasl).toEqual({ mechanism: 'scram-sha-512', username: 'u', password: 'p' });
    expect(security.ssl?.ca).toContain('BEGIN CERTIFICATE');
    expect(security.ssl?.checkServerIdentity).toBeTypeOf('function');
    expect(kafkajsSecurity(loadKafkaClientSettings(file('security.protocol=PLAINTEXT\n'), {}))).toEqual({});
  });
});
