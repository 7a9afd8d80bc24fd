package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/distribution/reference"
)

// destImage is KOTS's imageutil.DestImage: ParseDockerRef (which drops the tag when a digest is
// also given, and adds :latest when neither is), keep what follows the last "/", and join it to
// the registry host and namespace (filepath.Join, so an empty namespace leaves no "//").
func destImage(host, namespace, image string) (string, error) {
	parsed, err := reference.ParseDockerRef(image)
	if err != nil {
		return "", fmt.Errorf("failed to normalize source image: %w", err)
	}
	parts := strings.Split(parsed.String(), "/")
	return filepath.Join(host, namespace, parts[len(parts)-1]), nil
}

// pullSecretName is registry.SecretNameFromPrefix(appSlug).
func pullSecretName(appSlug string) string {
	if appSlug == "" {
		return ""
	}
	return appSlug + "-registry"
}

// dockerConfigJSON is the .dockerconfigjson of registry.PullSecretForRegistries for the local
// registry: one auth for the host (never host/namespace).
func dockerConfigJSON(s Settings) []byte {
	auth := base64.StdEncoding.EncodeToString([]byte(s.RegistryUsername + ":" + s.RegistryPassword))
	host := strings.Split(s.RegistryHost, "/")[0]
	out, _ := json.Marshal(map[string]interface{}{"auths": map[string]interface{}{host: map[string]string{"auth": auth}}})
	return out
}

// proxiedImage is image.RewritePrivateImage with registry.MakeProxiedImageURL:
// <proxy>/proxy/<slug>/<image without tag or digest>, then the digest, else the tag (":latest"
// when the reference had neither, as ParseDockerRef adds it).
func proxiedImage(proxyHost, appSlug, image string) (string, error) {
	parsed, err := reference.ParseDockerRef(image)
	if err != nil {
		return "", fmt.Errorf("failed to parse docker ref %q: %w", image, err)
	}
	parts := strings.Split(image, "/")
	last := strings.Split(strings.Split(parts[len(parts)-1], "@")[0], ":")[0]
	parts[len(parts)-1] = last
	untagged := strings.Join(parts, "/")
	proxied := untagged
	if strings.Split(untagged, "/")[0] != proxyHost {
		proxied = strings.Join([]string{proxyHost, "proxy", appSlug, untagged}, "/")
	}
	if c, ok := parsed.(reference.Canonical); ok {
		return proxied + "@" + c.Digest().String(), nil
	}
	if t, ok := parsed.(reference.Tagged); ok {
		return proxied + ":" + t.Tag(), nil
	}
	return proxied, nil
}
