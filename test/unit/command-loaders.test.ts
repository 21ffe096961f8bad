/**
 * amendsctl loads only the command it runs (src/cli/amendsctl-command-loaders.ts): each name
 * must load the command of that name, and the full list must keep help's order.
 */
import { describe, expect, it } from 'vitest';
import { amendsctlCommandLoader, amendsctlCommandNames } from '../../src/cli/amendsctl-command-loaders.js';
import { amendsctlCommands } from '../../src/cli/amendsctl-commands.js';

describe('amendsctl command loaders', () => {
  it('load, for each name, the command of that name', async () => {
    for (const name of amendsctlCommandNames) {
      const load = amendsctlCommandLoader(name);
      expect(load, name).toBeDefined();
      expect((await (load as () => Promise<{ name: string }>)()).name).toBe(name);
    }
  });

  it('know no name that is not a command, whatever the object prototype holds', () => {
    for (const name of [undefined, 'nope', 'help', '--version', 'constructor', '__proto__', 'toString']) {
      expect(amendsctlCommandLoader(name), String(name)).toBeUndefined();
    }
  });

  it('list every command in help order', () => {
    expect(amendsctlCommands.map((c) => c.name)).toEqual([...amendsctlCommandNames]);
    expect(amendsctlCommandNames).toEqual([
      'migrate',
      ...['source-create', 'source-adopt', 'source-load', 'output-create', 'rebuild-create', 'config-revise'],
      'manifest-recover',
      'namespace-drop',
      ...['simulate', 'inspect', 'wait', 'export', 'explain', 'balances'],
      ...['verify', 'showcase', 'chaos', 'completion'],
    ]);
  });
});
