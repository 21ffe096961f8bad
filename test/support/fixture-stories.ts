/**
 * The fixture stories the transport suites run through real processes: the four files over
 * fixtures/two-keys.config.json (widget@berlin on partition 0, gadget@paris on 1) and what
 * they decide into.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './amendsctl-process.js';

export const fixturePath = (name: string) => join(repoRoot, 'fixtures', name);
export const twoKeysConfig = fixturePath('two-keys.config.json');
export const storyFiles = ['before.jsonl', 'second-key.jsonl', 'correction.jsonl', 'cancel-last-day.jsonl'];
export const allStories = () => storyFiles.map((s) => readFileSync(fixturePath(s), 'utf8')).join('');
/** 10 records on partition 0, 7 on partition 1. */
export const storyRecords = 17;
/** The four stories decide into 17 output versions over 7 (item, location, day) rows. */
export const storyVersions = 17;
export const storyRows = 7;
