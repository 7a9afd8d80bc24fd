// Where an install's time goes (issue 32: where a goal is not met, the bench says why), read from
// the installer's own debug log of a timed run: pino's `time` on each line against the moment the
// process was spawned. Pure; the install and upgrade rows print it beside their figures.
import { median } from './measure.js';

export interface Phases {
  /** Spawn to the first log line: Node's start, our modules, chart, values, helm found. */
  startup: number;
  /** First line to `helm upgrade` starting: connect, release read, render check, RBAC, Lease. */
  beforeHelm: number;
  /** The render check's `helm template`, part of beforeHelm. */
  renderCheck: number;
  /** The CRD step (src/crds/upgrade-crds.ts), part of beforeHelm; 0 for a chart without CRDs. */
  crdStep: number;
  /** `helm upgrade` as the installer ran it. */
  helm: number;
  /** `helm upgrade` ended to the process's exit: the drift named, the summary, the Events. */
  afterHelm: number;
}

interface LogLine {
  time: number;
  msg?: string;
  helm?: string;
  phase?: string;
}

/** `startedAt`: Date.now() at the spawn; `wall`: seconds until the process ended. */
export function phasesOf(log: string, startedAt: number, wall: number): Phases {
  const lines = log
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as LogLine);
  const at = (helm: string, msg: string) => lines.find((l) => l.helm === helm && l.msg === msg)?.time;
  const first = lines[0]?.time;
  const [upStart, upEnd] = [at('upgrade', 'running helm'), at('upgrade', 'helm ended')];
  if (first === undefined || upStart === undefined || upEnd === undefined)
    throw new Error(
      'the debug log has no first line or no helm upgrade start and end (is --log-level debug honoured?)',
    );
  const [tplStart, tplEnd] = [at('template', 'running helm'), at('template', 'helm ended')];
  const crdLines = lines.filter((l) => l.phase === 'crd step');
  const [crdStart, crdEnd] = [crdLines[0]?.time, crdLines.at(-1)?.time];
  const end = startedAt + wall * 1000;
  return {
    startup: (first - startedAt) / 1000,
    beforeHelm: (upStart - first) / 1000,
    renderCheck: tplStart !== undefined && tplEnd !== undefined ? (tplEnd - tplStart) / 1000 : 0,
    crdStep: crdStart !== undefined && crdEnd !== undefined ? (crdEnd - crdStart) / 1000 : 0,
    helm: (upEnd - upStart) / 1000,
    afterHelm: (end - upEnd) / 1000,
  };
}

/** The medians, as one line beside plain helm's median wall time. */
export function describePhases(all: Phases[], plainHelm: number): string {
  const m = (k: keyof Phases) => median(all.map((p) => p[k])).toFixed(2);
  const crds = all.some((p) => p.crdStep > 0) ? `, the CRD step ${m('crdStep')} s` : '';
  return `where ours goes (medians): start-up ${m('startup')} s; before helm ${m('beforeHelm')} s (the render check's helm template ${m('renderCheck')} s${crds}); helm upgrade ${m('helm')} s against ${plainHelm.toFixed(2)} s alone; after helm ${m('afterHelm')} s`;
}
