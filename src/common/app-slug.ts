// The annotation `kubectl kots remove --undeploy` deletes by: every namespaced object in the KOTS
// namespace and the Application's additionalNamespaces whose `kots.io/app-slug` equals the app's
// slug goes (kots pkg/operator/client/delete.go, clearNamespaces). Alone here, so the Lease and
// the release records can name it without loading the manifest rewrite.
export const APP_SLUG_ANNOTATION = 'kots.io/app-slug';
