package main

// The template engine, as KOTS's pkg/template builds it: Go's text/template with sprig's
// TxtFuncMap, then KOTS's static, version and config functions on top (later contexts override
// earlier ones, as in Builder.BuildFuncMap), executed twice: first with the delimiters
// `{{repl` `}}`, then with `repl{{` `}}` (Builder.RenderTemplate). The second pass parses the
// output of the first, so a value printed by a `{{repl` action that contains `repl{{` is run as a
// template too; values printed by `repl{{` actions are never parsed again.

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"text/template"
	"time"

	sprig "github.com/Masterminds/sprig/v3"
	yamlv3 "go.yaml.in/yaml/v3"
)

// Settings are what KOTS knows when it renders a version: the local registry the admin entered
// (airgap or a private registry), the namespace kotsadm runs in, the version's sequence.
type Settings struct {
	Namespace         string
	Sequence          int64
	AppSlug           string
	IsAirgap          bool
	RegistryHost      string
	RegistryNamespace string
	RegistryUsername  string
	RegistryPassword  string
	VersionLabel      string
	ChannelName       string
	// ProxyHost, when set, makes every image private (KOTS asks each image's registry; this
	// renderer has no network) and LocalImageName proxies it through this host online.
	ProxyHost string
}

type Builder struct {
	settings Settings
	items    map[string]ItemValue
}

func (b *Builder) funcMap() template.FuncMap {
	f := sprig.TxtFuncMap()
	// StaticCtx (pkg/template/static_context.go): the functions that need no cluster.
	f["Now"] = func() string { return time.Now().UTC().Format(time.RFC3339) }
	f["NowFmt"] = func(format string) string {
		if format == "" {
			format = time.RFC3339
		}
		return time.Now().UTC().Format(format)
	}
	f["ToLower"] = strings.ToLower
	f["ToUpper"] = strings.ToUpper
	f["TrimSpace"] = strings.TrimSpace
	f["Trim"] = func(s string, args ...string) string {
		if len(args) == 0 {
			return strings.TrimSpace(s)
		}
		return strings.Trim(s, args[0])
	}
	f["UrlEncode"] = url.QueryEscape
	f["Base64Encode"] = func(plain string) string { return base64.StdEncoding.EncodeToString([]byte(plain)) }
	f["Base64Decode"] = func(encoded string) string {
		plain, err := base64.StdEncoding.DecodeString(encoded)
		if err != nil {
			return ""
		}
		return string(plain)
	}
	f["Split"] = strings.Split
	f["ParseBool"] = func(s string) bool { v, _ := strconv.ParseBool(s); return v }
	f["ParseFloat"] = func(s string) float64 { v, _ := strconv.ParseFloat(s, 64); return v }
	f["ParseInt"] = func(s string, args ...int) int64 {
		base := 10
		if len(args) > 0 {
			base = args[0]
		}
		v, _ := strconv.ParseInt(s, base, 64)
		return v
	}
	f["ParseUint"] = func(s string, args ...int) uint64 {
		base := 10
		if len(args) > 0 {
			base = args[0]
		}
		v, _ := strconv.ParseUint(s, base, 64)
		return v
	}
	f["Namespace"] = func() string { return b.settings.Namespace }
	f["YamlEscape"] = func(plain string) string {
		out, err := yamlv3.Marshal(plain)
		if err != nil {
			return ""
		}
		pad := strings.Repeat(" ", 20)
		return pad + strings.ReplaceAll(string(out), "\n", "\n"+pad)
	}
	// Cluster probes answer as KOTS does when it cannot reach a cluster.
	f["IsKurl"] = func() bool { return false }
	f["Distribution"] = func() string { return "" }
	f["HTTPProxy"] = func() string { return os.Getenv("HTTP_PROXY") }
	f["HTTPSProxy"] = func() string { return os.Getenv("HTTPS_PROXY") }
	f["NoProxy"] = func() string { return os.Getenv("NO_PROXY") }

	// versionCtx (pkg/template/version_context.go).
	f["Sequence"] = func() int64 { return b.settings.Sequence }
	f["IsAirgap"] = func() bool { return b.settings.IsAirgap }
	f["VersionLabel"] = func() string { return b.settings.VersionLabel }
	f["ChannelName"] = func() string { return b.settings.ChannelName }
	f["Cursor"] = func() string { return strconv.FormatInt(b.settings.Sequence, 10) }

	// ConfigCtx (pkg/template/config_context.go).
	f["ConfigOption"] = func(name string) string { v, _ := b.optionValue(name); return v }
	f["ConfigOptionName"] = func(name string) string { return name }
	f["ConfigOptionIndex"] = func(name string) string { return "" }
	f["ConfigOptionData"] = func(name string) string {
		v, ok := b.optionValue(name)
		if !ok {
			return ""
		}
		decoded, err := base64.StdEncoding.DecodeString(v)
		if err != nil {
			return ""
		}
		return string(decoded)
	}
	f["ConfigOptionFilename"] = func(name string) string { return b.items[name].Filename }
	f["ConfigOptionEquals"] = func(name, value string) bool {
		v, ok := b.optionValue(name)
		return ok && v == value
	}
	f["ConfigOptionNotEquals"] = func(name, value string) bool {
		v, ok := b.optionValue(name)
		return ok && v != value
	}
	f["LocalRegistryAddress"] = func() string {
		if b.settings.RegistryNamespace == "" {
			return b.settings.RegistryHost
		}
		return b.settings.RegistryHost + "/" + b.settings.RegistryNamespace
	}
	f["LocalRegistryHost"] = func() string { return b.settings.RegistryHost }
	f["LocalRegistryNamespace"] = func() string { return b.settings.RegistryNamespace }
	f["HasLocalRegistry"] = func() bool { return b.settings.RegistryHost != "" }
	f["LocalImageName"] = b.localImageName
	f["ImagePullSecretName"] = func() string { return pullSecretName(b.settings.AppSlug) }
	f["LocalRegistryImagePullSecret"] = func() string {
		if b.settings.RegistryHost == "" {
			return ""
		}
		return base64.StdEncoding.EncodeToString(dockerConfigJSON(b.settings))
	}
	return f
}

// optionValue is getConfigOptionValue: the item's value when it has one, else its default;
// false for a name the Config does not have (ConfigOption then prints "").
func (b *Builder) optionValue(name string) (string, bool) {
	v, ok := b.items[name]
	if !ok {
		return "", false
	}
	if v.Value != "" {
		return v.Value, true
	}
	return v.Default, true
}

// localImageName: with a local registry every image is rewritten (DestImage). Without one KOTS
// asks the image's registry whether it is private and proxies private images through
// Replicated; this renderer has no network: an image is public (kept as given) unless
// --proxy-private-images names the proxy host.
func (b *Builder) localImageName(image string) (string, error) {
	if b.settings.RegistryHost == "" {
		if b.settings.ProxyHost == "" {
			return image, nil
		}
		proxied, err := proxiedImage(b.settings.ProxyHost, b.settings.AppSlug, image)
		if err != nil {
			fmt.Fprintf(os.Stderr, "kots-render: warning: LocalImageName %q: %v\n", image, err)
			return "", nil
		}
		return proxied, nil
	}
	dest, err := destImage(b.settings.RegistryHost, b.settings.RegistryNamespace, image)
	if err != nil {
		// KOTS logs a warning and prints an empty string.
		fmt.Fprintf(os.Stderr, "kots-render: warning: LocalImageName %q: %v\n", image, err)
		return "", nil
	}
	return dest, nil
}

// Render is Builder.RenderTemplate: the `{{repl` pass, then the `repl{{` pass over its output.
func (b *Builder) Render(name, text string) (string, error) {
	cur := text
	for _, d := range [][2]string{{"{{repl", "}}"}, {"repl{{", "}}"}} {
		tmpl, err := template.New(name).Delims(d[0], d[1]).Funcs(b.funcMap()).Parse(cur)
		if err != nil {
			return "", fmt.Errorf("failed to get template: %w", err)
		}
		var out bytes.Buffer
		if err := tmpl.Execute(&out, nil); err != nil {
			return "", fmt.Errorf("failed to execute template: %w", err)
		}
		cur = out.String()
	}
	return cur, nil
}

// String is Builder.String: "" stays "" without parsing.
func (b *Builder) String(text string) (string, error) {
	if text == "" {
		return "", nil
	}
	return b.Render(text, text)
}
