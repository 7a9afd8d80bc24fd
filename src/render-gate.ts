// Install's checks on helm upgrade's own render, instead of a render of their own. Helm 4 hands
// its post-renderer the whole rendered release (hooks included) after it has read the release
// and before it writes anything: no release record, no object. This process serves that slot
// (post-render-host.ts) and answers only when the checks that must come before any change have
// passed on exactly what helm is about to apply (the RBAC preflight) and the run may go on (it
// holds the release Lease and the release is as it was read). Otherwise helm is stopped there,
// and the cluster is as it was. An install thus renders the chart once, in helm, and the checks
// run while helm starts, instead of a `helm template` (a second render: 30 ms for a small chart,
// seconds for a large one) before helm can start.
import type { InstallerError } from './errors.js';
import { filesThatMayHaveLostANewline } from './helm/post-render-roundtrip.js';
import { EMPTY_STREAM, hostPostRenderer, type ServedRequest } from './images/post-render-host.js';

/** Helm 4's plugin name for the gate (its argv shows it: `--post-renderer helm-installer-checks`). */
export const RENDER_GATE_PLUGIN = 'helm-installer-checks';


export interface RenderGateOptions {
  /** A private directory for this run (the shim, its FIFOs and plugin). */
  workDir: string;
  /** The checks on helm's render (templates and hooks, as helm will apply them); throws an InstallerError. */
  check: (manifests: string) => Promise<void>;
  /** After the checks: whether helm may go on (false: the run starts over without this helm). */
  proceed: () => Promise<boolean>;
  /**
   * False for a helm (before 4.2.0) whose post-render round trip can drop a block scalar's final
   * newline (post-render-roundtrip.ts): where it may have, the run starts over without the gate.
   */
  keepsValues: boolean;
}

export interface RenderGate {
  /** Append to `helm upgrade`, and add to its environment. */
  helmArgs: string[];
  env: Record<string, string>;
  /** Resolves once helm's render passed the checks; rejects when they failed or helm ended before. */
  checked: Promise<void>;
  /** Why the gate stopped helm: the checks' own failure, or 'restart' (the run starts over). */
  stoppedBy(): InstallerError | 'restart' | undefined;
  /** What made it start over, for the log. */
  restartReason(): string | undefined;
  /** The checks passed on helm's render (they need not run again when the run starts over). */
  passed(): boolean;
  /** Stops helm at the gate (now, or when it gets there): the run starts over without it. */
  restart(): void;
  /** Helm has ended: `checked` rejects with `cause` if the render never reached the gate. */
  helmEnded(cause: unknown): void;
  dispose(): void;
}

export async function openRenderGate(o: RenderGateOptions): Promise<RenderGate> {
  let stopped: InstallerError | 'restart' | undefined;
  let reason: string | undefined;
  let passed = false;
  let restartAsked = false;
  let askRestart!: () => void;
  const restarting = new Promise<false>((resolve) => {
    askRestart = () => resolve(false);
  });
  let resolveChecked!: () => void;
  let rejectChecked!: (error: unknown) => void;
  const checked = new Promise<void>((resolve, reject) => {
    resolveChecked = resolve;
    rejectChecked = reject;
  });
  checked.catch(() => undefined);
  const restart = (why: string): ServedRequest => {
    stopped = 'restart';
    reason ??= why;
    return { exitCode: 1, stderr: 'helm-installer: stopped before any change; the installer starts over\n' };
  };

  const hosted = await hostPostRenderer({ workDir: o.workDir, helmMajor: 4, plugin: RENDER_GATE_PLUGIN }, async (input, write) => {
    const chunks: Buffer[] = [];
    for await (const chunk of input) chunks.push(Buffer.from(chunk));
    const manifests = Buffer.concat(chunks).toString('utf8');
    if (restartAsked) return restart('another installer holds the release');
    try {
      await o.check(manifests);
    } catch (error) {
      stopped = error as InstallerError;
      rejectChecked(error);
      return { exitCode: 1, stderr: `helm-installer: ${(error as Error).message.split('\n')[0]}\n` };
    }
    passed = true;
    resolveChecked();
    // Checked (a namespace the run must create may be made), but not applied through this helm
    // if its round trip may have changed a value: the run renders and applies without the gate.
    const changed = o.keepsValues ? [] : filesThatMayHaveLostANewline(manifests);
    if (changed.length > 0) return restart(`helm before 4.2.0 may have dropped the final newline of a block scalar ending ${changed.join(', ')} on its way to the post-renderer`);
    try {
      // A restart asked meanwhile (another installer holds the Lease) answers at once.
      if (!(await Promise.race([o.proceed(), restarting])) || restartAsked) return restart(restartAsked ? 'another installer holds the release' : 'the release changed since it was read');
    } catch (error) {
      stopped = error as InstallerError;
      return { exitCode: 1, stderr: `helm-installer: ${(error as Error).message.split('\n')[0]}\n` };
    }
    write(manifests.trim() === '' ? EMPTY_STREAM : manifests);
    return { exitCode: 0, stderr: '' };
  });
  return {
    helmArgs: hosted.helmArgs,
    env: hosted.env,
    checked,
    stoppedBy: () => stopped,
    restartReason: () => reason,
    passed: () => passed,
    restart: () => {
      restartAsked = true;
      askRestart();
    },
    helmEnded: (cause) => rejectChecked(cause),
    dispose: hosted.dispose,
  };
}
