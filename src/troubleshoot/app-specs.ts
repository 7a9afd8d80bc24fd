// The three documents of the app, from its rendered releases and where they run (pure).
import { appFacts, type ReleaseRender } from './app-facts.js';
import type { Obj } from './pod-spec.js';
import { preflightSpec } from './preflight-spec.js';
import type { SpecTarget } from './spec-target.js';
import { redactorSpec, supportBundleSpec } from './support-bundle-spec.js';

export function appSpecs(releases: ReleaseRender[], target: SpecTarget): Obj[] {
  const facts = appFacts(releases);
  return [preflightSpec(facts, target), supportBundleSpec(facts, releases, target), redactorSpec(target)];
}
