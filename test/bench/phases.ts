// Where an install's time goes (issues 32 and 41: where a goal is not met, the bench says why), read
// from the installer's own debug log of a timed run: pino's `time` on each line against the moment
// the process was spawned, and the `stage` lines the run writes as it enters each stage
// (src/run/run-control.ts). Pure; the install, upgrade and no-op rows print it beside their figures.
import { median } from './measure.js';

export interface Phases {
  /** Spawn to the first log line: Node's start, our modules, chart, values, helm found. */
  startup: number;
  /** First line to the render check (an upgrade), or to the decision to skip (a no-op): connect, the release read, decide. */
  readAndDecide: number;
  /** The render check's `helm template`. */
  renderCheck: number;
  /** The RBAC preflight and the cluster fit check, to the Lease. */
  preflights: number;
  /** The Lease, and the reads and checks under it, to `helm upgrade` starting. */
  underLease: number;
  /** The CRD step (src/crds/upgrade-crds.ts), part of underLease; 0 for a chart without CRDs. */
  crdStep: number;
  /** First line to `helm upgrade` starting: all of the above but start-up. */
  beforeHelm: number;
  /** `helm upgrade` as the installer ran it; 0 for a no-op. */
  helm: number;
  /** `helm upgrade` ended (or the decision to skip) to the process's exit: the summary, the Lease let go, the Events. */
  afterHelm: number;
}

interface LogLine {
  time: number;
  msg?: string;
  helm?: string;
  stage?: string;
  phase?: string;
}

/** `startedAt`: Date.now() at the spawn; `wall`: seconds until the process ended. */
export function phasesOf(log: string, startedAt: number, wall: number): Phases {
  const lines = log
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as LogLine);
  const at = (helm: string, msg: string) => lines.find((l) => l.helm === helm && l.msg === msg)?.time;
  const stage = (name: string) => lines.find((l) => l.msg === 'stage' && l.stage === name)?.time;
  const first = lines[0]?.time;
  const skipped = lines.find((l) => l.msg?.startsWith('unchanged:'))?.time;
  const [upStart, upEnd] = [at('upgrade', 'running helm'), at('upgrade', 'helm ended')];
  const decided = upStart ?? skipped;
  if (first === undefined || decided === undefined)
    throw new Error(
      'the debug log has no first line, or neither a helm upgrade nor a skip (is --log-level debug honoured?)',
    );
  const [tplStart, tplEnd] = [at('template', 'running helm'), at('template', 'helm ended')];
  const [checkAt, rbacAt, leaseAt] = [
    stage('render check'),
    stage('rbac preflight'),
    stage('waiting for the release lease'),
  ];
  const crdLines = lines.filter((l) => l.phase === 'crd step');
  const gap = (from: number | undefined, to: number | undefined) =>
    from !== undefined && to !== undefined ? (to - from) / 1000 : 0;
  const end = startedAt + wall * 1000;
  return {
    startup: (first - startedAt) / 1000,
    readAndDecide: gap(first, checkAt ?? decided),
    renderCheck: gap(tplStart, tplEnd),
    preflights: gap(rbacAt, leaseAt),
    underLease: gap(leaseAt, upStart),
    crdStep: gap(crdLines[0]?.time, crdLines.at(-1)?.time),
    beforeHelm: upStart !== undefined ? gap(first, upStart) : 0,
    helm: gap(upStart, upEnd),
    afterHelm: (end - (upEnd ?? decided)) / 1000,
  };
}

/** The medians, as one line; `plainHelm`: plain helm's median wall time, beside ours' helm upgrade. */
export function describePhases(all: Phases[], plainHelm?: number): string {
  const m = (k: keyof Phases) => `${median(all.map((p) => p[k])).toFixed(2)} s`;
  if (median(all.map((p) => p.helm)) === 0)
    return `where ours goes (medians): start-up ${m('startup')}; connect, release read and decide ${m('readAndDecide')}; after the decision ${m('afterHelm')}`;
  const crds = all.some((p) => p.crdStep > 0) ? `, of which the CRD step ${m('crdStep')}` : '';
  return [
    `where ours goes (medians): start-up ${m('startup')}`,
    `before helm ${m('beforeHelm')} (connect, release read and decide ${m('readAndDecide')}; the render check's helm template ${m('renderCheck')}; RBAC and fit preflights ${m('preflights')}; the Lease and the checks under it ${m('underLease')}${crds})`,
    `helm upgrade ${m('helm')}${plainHelm !== undefined ? ` against ${plainHelm.toFixed(2)} s alone` : ''}`,
    `after helm ${m('afterHelm')}`,
  ].join('; ');
}
