// docs/options.md lists every option of every command with its environment variable, as the
// commands declare them (the same tables `--help` prints): an option added without a row fails.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { commandCatalog } from '../../src/cli/commands/catalog.js';
import { repoRoot } from '../helpers.js';

const doc = readFileSync(join(repoRoot, 'docs', 'options.md'), 'utf8');

describe('docs/options.md', () => {
  it.each(commandCatalog.map((c) => [c.name, c]))('names every option of %s and its variable', async (_name, entry) => {
    const definition = await entry.load();
    const missing: string[] = [];
    for (const spec of Object.values(definition.options)) {
      // The long flag as a word, or its short form as the table writes it (`-o text|json`, `-f, --values`).
      const long = /--[a-z][a-z0-9-]*/.exec(spec.flags)?.[0];
      const short = /^-[a-z](?=,)/.exec(spec.flags)?.[0];
      const named = (flag: string) => new RegExp(`\`${flag}[ \`=]|[ ,]${flag}[ \`]`).test(doc);
      if (long && !named(long) && !(short && named(short))) missing.push(long);
      if (!doc.includes('`' + spec.env + '`')) missing.push(spec.env);
    }
    expect(missing).toEqual([]);
  });
});
