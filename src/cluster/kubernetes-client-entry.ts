// The parts of the official Kubernetes client the installer uses, and nothing else. `npm run
// build` bundles this file with esbuild (an entry of the CLI's bundle, test/tools/bundle-cli.mjs)
// into dist/bundle/kubernetes-client.js: the package itself
// is about a thousand ES modules (every API group and every model), and resolving and linking
// them one by one cost each install and each no-op redeploy 0.3-0.5 s on a quiet machine (over
// 1.4 s under load) before the Lease could be taken; the one minified file loads in about 0.1 s.
// Tests that run the TypeScript sources load this file unbundled (see kube-client.ts).
export { KubeConfig } from '@kubernetes/client-node/dist/config.js';
export {
  AppsV1Api,
  AuthorizationV1Api,
  BatchV1Api,
  CoordinationV1Api,
  CoreV1Api,
  EventsV1Api,
} from '@kubernetes/client-node/dist/gen/index.js';
export { KubernetesObjectApi } from '@kubernetes/client-node/dist/object.js';
export { V1MicroTime } from '@kubernetes/client-node/dist/types.js';
