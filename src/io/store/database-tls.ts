/**
 * The TLS side of AMENDS_DATABASE_URL in words a user can act on (issue 35). pg reads the files
 * that `sslrootcert`, `sslcert` and `sslkey` name when it builds a client, relative to the
 * working directory, and a missing one escapes as a bare ENOENT; so they are checked first and
 * named with the path as resolved. A certificate the server's chain fails is explained by what
 * the URL trusts: without `sslrootcert` only the system's CAs.
 */
import { accessSync, constants } from 'node:fs';
import { resolve } from 'node:path';
import { operationalError } from '../../kernel/amends-error.js';
import { errorMessage } from '../../kernel/error-message.js';

/** The URL parameters pg reads a file for (pg-connection-string 2.x, index.js). */
const fileParameters = ['sslrootcert', 'sslcert', 'sslkey'] as const;

/** Node's codes for a server certificate that no trusted CA vouches for. */
const untrustedChain = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
]);

function parameters(url: string): URLSearchParams | undefined {
  try {
    return new URL(url).searchParams;
  } catch {
    return undefined;
  }
}

/**
 * Throws one line when a file the URL names cannot be read, or when `sslmode=verify-ca` has no
 * `sslrootcert` (pg would throw a multi-line SECURITY WARNING while building the client).
 */
export function checkTlsParameters(url: string): void {
  const params = parameters(url);
  if (params === undefined) return;
  for (const name of fileParameters) {
    const value = params.get(name);
    if (value === null || value === '') continue;
    const path = resolve(value);
    try {
      accessSync(path, constants.R_OK);
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      const why = code === 'ENOENT' ? 'no such file' : typeof code === 'string' ? code : errorMessage(error);
      const relative = path === value ? '' : ` (a relative path is read from the working directory, ${process.cwd()})`;
      throw operationalError(
        `AMENDS_DATABASE_URL: ${name}=${value} cannot be read: ${path}: ${why}${relative}; give the file's absolute path`,
        error,
      );
    }
  }
  if (params.get('sslmode') === 'verify-ca' && !params.get('sslrootcert')) {
    throw operationalError(
      'AMENDS_DATABASE_URL: sslmode=verify-ca needs the CA that signed the server certificate: add sslrootcert=/path/to/ca.pem',
    );
  }
}

/** What to do about a failed TLS handshake with the database, or undefined when it is not one. */
export function tlsAdvice(code: string, url: string): string | undefined {
  const rootCert = parameters(url)?.get('sslrootcert');
  if (untrustedChain.has(code)) {
    return rootCert
      ? `the server's certificate is not signed by the CA in sslrootcert=${resolve(rootCert)}: name the CA that signed it`
      : "the server's certificate is not signed by a CA this host trusts: name its CA with sslrootcert=/path/to/ca.pem in AMENDS_DATABASE_URL";
  }
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
    return "the server's certificate does not name the host of AMENDS_DATABASE_URL: connect by a name it lists";
  }
  return undefined;
}
