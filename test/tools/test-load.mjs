// `npm run test:load -- <vitest args>`: the given tests with an artificial load beside them, as on
// a customer's busy node (issue 40): CPU-bound processes (TEST_LOAD_BURNERS, default 2) for the
// whole run. Bounded whatever happens: the burners stop when vitest ends, when this script is
// interrupted (Ctrl-C, SIGTERM), and, should it be killed outright, by themselves once their
// parent is gone (they watch their parent pid) or after TEST_LOAD_MAX_MINUTES (default 120).
// Prints the load average before and after, and the run's time.
import { spawn } from 'node:child_process';
import { loadavg } from 'node:os';

// vitest and the CLI the tests spawn run on this Node: the pinned one (npm run puts it first).
if (Number(process.versions.node.split('.')[0]) < 24)
  fail(`needs Node.js >= 24, this is ${process.version} (${process.execPath}); run it as npm run test:load -- <files>`);
const burners = Number(process.env.TEST_LOAD_BURNERS ?? 2);
const maxMinutes = Number(process.env.TEST_LOAD_MAX_MINUTES ?? 120);
if (!Number.isInteger(burners) || burners < 0 || burners > 64)
  fail(`TEST_LOAD_BURNERS must be a whole number 0-64, got ${process.env.TEST_LOAD_BURNERS}`);
if (!(maxMinutes > 0)) fail(`TEST_LOAD_MAX_MINUTES must be a number above 0, got ${process.env.TEST_LOAD_MAX_MINUTES}`);

// Busy for 200 ms at a time, then checks it should go on: its parent still this script, its time
// not up. process.ppid is read from the OS on each access.
const burn = `
const parent = process.ppid, end = Date.now() + ${Math.round(maxMinutes * 60_000)};
for (;;) {
  const t = Date.now() + 200;
  while (Date.now() < t);
  if (process.ppid !== parent || Date.now() > end) process.exit(0);
}`;

function fail(message) {
  console.error(`test:load: ${message}`);
  process.exit(2);
}

const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
const started = Date.now();
console.log(`test:load: ${burners} CPU-bound process(es) beside the run; load average before: ${load()}`);
const running = Array.from({ length: burners }, () => spawn(process.execPath, ['-e', burn], { stdio: 'ignore' }));
const stopBurners = () => running.forEach((b) => b.exitCode === null && b.signalCode === null && b.kill('SIGKILL'));
process.on('exit', stopBurners);

const vitest = spawn(process.execPath, ['node_modules/vitest/vitest.mjs', 'run', ...process.argv.slice(2)], {
  stdio: 'inherit',
});
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    stopBurners();
    // The terminal's Ctrl-C reaches vitest too (same process group); a SIGTERM sent here alone is passed on.
    if (signal === 'SIGTERM') vitest.kill('SIGTERM');
  });
}
vitest.on('exit', (code, signal) => {
  const loadAtEnd = load();
  stopBurners();
  console.log(
    `test:load: vitest ${signal ? `ended by ${signal}` : `exited ${code}`} after ${((Date.now() - started) / 1000).toFixed(1)} s; load average at the end: ${loadAtEnd}`,
  );
  process.exit(code ?? 1);
});
