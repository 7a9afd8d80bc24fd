// Loaded with `node --import` in front of the CLI by the hostile-input test: at exit, writes the
// process's peak resident set (VmHWM, what a memory limit counts against) to $PEAK_RSS_FILE.
import { readFileSync, writeFileSync } from 'node:fs';

const target = process.env.PEAK_RSS_FILE;
if (target) {
  process.on('exit', () => {
    const kib = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1];
    writeFileSync(target, kib ?? '');
  });
}
