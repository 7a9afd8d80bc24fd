// Run with a Node older than package.json's `engines` (what a newcomer types on a machine whose
// system Node is older, `node dist/bundle/cli.js ...`), the CLI names the Node it needs and the
// one it found, in one line, and exits 2 (a usage error: nothing was attempted). The entry point
// imports nothing statically (src/cli.ts), so it parses and links on old Node. The oldest Node on
// the machine is the system's (/usr/bin/node), when there is one older than the engines.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { repoRoot, runCli } from '../helpers.js';

const engines = (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { engines: { node: string } })
  .engines.node;
const needed = Number(/^>=(\d+)$/.exec(engines)?.[1]);
const systemNode = '/usr/bin/node';
const systemVersion = existsSync(systemNode)
  ? String((await execa(systemNode, ['--version'])).stdout).trim()
  : undefined;
const older = systemVersion !== undefined && Number(/^v(\d+)/.exec(systemVersion)?.[1]) < needed;

describe('an older Node', () => {
  it("the entry point's Node major is package.json's engines (>=N, a major)", () => {
    expect(needed).toBeGreaterThan(0);
    expect(readFileSync(join(repoRoot, 'src', 'cli.ts'), 'utf8')).toMatch(
      new RegExp(`^const NODE_MAJOR = ${needed};$`, 'm'),
    );
  });

  it.runIf(older)(
    `exits 2 with one line naming the Node it needs and the one it found (${systemNode}, ${systemVersion})`,
    async () => {
      for (const args of [['--version'], ['install', '--namespace', 'x']]) {
        const r = await runCli(args, { node: systemNode });
        expect(r).toEqual({
          exitCode: 2,
          stdout: '',
          stderr: `helm-installer needs Node.js >=${needed} (package.json engines); this is Node.js ${systemVersion} (${systemNode})`,
        });
      }
    },
  );
});
