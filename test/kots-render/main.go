// kots-render renders a KOTS release's plain manifests the way KOTS does before it deploys them,
// so tests can apply exactly what a customer's cluster would get. It is test tooling built from
// KOTS's own rules (replicatedhq/kots pkg/template, pkg/base, pkg/imageutil), not a KOTS.
//
//	kots-render [flags] FILE|DIR...
//
// Reads every *.yaml of the release (the Config among them supplies the items' defaults), the
// customer's answers as a kots.io/v1beta1 ConfigValues file, and the registry the admin set up;
// prints the documents KOTS would deploy. Documents KOTS would drop (YAML it cannot parse after
// rendering) are named on stderr; --strict makes that exit 3.
//
// Exit codes: 0 rendered, 2 usage, 3 invalid input or (with --strict) a dropped document.
package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	yaml "go.yaml.in/yaml/v2"
)

type renderedDoc struct {
	Source  string `json:"source"`
	Content string `json:"content"`
}

type droppedDoc struct {
	Source string `json:"source"`
	Error  string `json:"error"`
}

type result struct {
	Documents []renderedDoc `json:"documents"`
	Dropped   []droppedDoc  `json:"dropped"`
	// The Application's statusInformers as KOTS's operator renders them (applyStatusInformers):
	// each through the builder, an empty result left out.
	StatusInformers []string `json:"statusInformers"`
}

// Set by --kots-kinds.
var onlyKotsKinds bool

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	fs := flag.NewFlagSet("kots-render", flag.ContinueOnError)
	var s Settings
	configValues := fs.String("config-values", "", "the customer's answers: a kots.io/v1beta1 ConfigValues file")
	fs.StringVar(&s.Namespace, "namespace", "default", "the namespace KOTS runs in (the Namespace function)")
	fs.Int64Var(&s.Sequence, "sequence", 0, "the release sequence (the Sequence function)")
	fs.StringVar(&s.AppSlug, "app-slug", "", "the app slug (ImagePullSecretName is <slug>-registry); default: the Application's metadata.name")
	fs.BoolVar(&onlyKotsKinds, "kots-kinds", false, "print only KOTS's own kinds (Preflight, SupportBundle, Redactor, ...) rendered as KOTS renders them for itself, none of the app's manifests")
	fs.BoolVar(&s.IsAirgap, "airgap", false, "an airgap install (the IsAirgap function)")
	fs.StringVar(&s.RegistryHost, "registry-host", "", "the local registry host[:port] the admin set up (empty: none)")
	fs.StringVar(&s.RegistryNamespace, "registry-namespace", "", "the local registry namespace")
	fs.StringVar(&s.RegistryUsername, "registry-username", "", "the local registry user")
	fs.StringVar(&s.RegistryPassword, "registry-password", "", "the local registry password")
	fs.StringVar(&s.VersionLabel, "version-label", "", "the release's version label")
	fs.StringVar(&s.ChannelName, "channel", "", "the release channel")
	fs.StringVar(&s.ProxyHost, "proxy-private-images", "", "online (no local registry): treat every image as private and proxy it through this host (e.g. proxy.replicated.com), as KOTS does for private images")
	pullSecret := fs.Bool("pull-secret", true, "with a local registry, also print the <slug>-registry pull secret KOTS creates in the namespace")
	output := fs.String("o", "yaml", "output: yaml (a stream kubectl apply -f - takes) or json ({documents, dropped})")
	strict := fs.Bool("strict", false, "exit 3 when KOTS would drop a document")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 || (*output != "yaml" && *output != "json") {
		fmt.Fprintln(os.Stderr, "kots-render: usage: kots-render [flags] FILE|DIR... (-o yaml|json)")
		return 2
	}
	files, err := expand(fs.Args())
	if err != nil {
		return fail(err)
	}
	answered, err := readConfigValues(*configValues)
	if err != nil {
		return fail(err)
	}
	res, err := render(files, answered, &s, *pullSecret)
	if err != nil {
		return fail(err)
	}
	for _, d := range res.Dropped {
		fmt.Fprintf(os.Stderr, "kots-render: %s: KOTS drops this document (a YAML error after rendering; the rest is deployed): %s\n", d.Source, d.Error)
	}
	if *output == "json" {
		out, _ := json.MarshalIndent(res, "", "  ")
		fmt.Println(string(out))
	} else {
		var b strings.Builder
		for i, d := range res.Documents {
			if i > 0 {
				b.WriteString("---\n")
			}
			fmt.Fprintf(&b, "# Source: %s\n%s\n", d.Source, strings.TrimRight(d.Content, "\n"))
		}
		fmt.Print(b.String())
	}
	if *strict && len(res.Dropped) > 0 {
		return 3
	}
	return 0
}

func fail(err error) int {
	fmt.Fprintf(os.Stderr, "kots-render: %v\n", err)
	return 3
}

// expand turns directories into their *.yaml/*.yml files, sorted.
func expand(paths []string) ([]string, error) {
	var files []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			files = append(files, p)
			continue
		}
		entries, err := os.ReadDir(p)
		if err != nil {
			return nil, err
		}
		var names []string
		for _, e := range entries {
			if !e.IsDir() && (strings.HasSuffix(e.Name(), ".yaml") || strings.HasSuffix(e.Name(), ".yml")) {
				names = append(names, e.Name())
			}
		}
		sort.Strings(names)
		for _, n := range names {
			files = append(files, filepath.Join(p, n))
		}
	}
	return files, nil
}

type upstreamFile struct {
	path    string
	content []byte
}

func render(paths []string, answered map[string]ItemValue, s *Settings, pullSecret bool) (*result, error) {
	var files []upstreamFile
	var config *configDoc
	var informers []string
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		files = append(files, upstreamFile{path: p, content: raw})
		for _, doc := range splitDocs(raw) {
			var head simpleGVK
			if yaml.Unmarshal(doc, &head) != nil {
				continue
			}
			switch {
			case head.APIVersion == "kots.io/v1beta1" && head.Kind == "Config":
				var c configDoc
				if err := yaml.Unmarshal(doc, &c); err != nil {
					return nil, fmt.Errorf("%s: the Config: %w", p, err)
				}
				config = &c
			case head.APIVersion == "kots.io/v1beta1" && head.Kind == "Application":
				if s.AppSlug == "" {
					s.AppSlug = head.Metadata.Name
				}
				var app struct {
					Spec struct {
						StatusInformers []string `yaml:"statusInformers"`
					} `yaml:"spec"`
				}
				if err := yaml.Unmarshal(doc, &app); err != nil {
					return nil, fmt.Errorf("%s: the Application: %w", p, err)
				}
				informers = append(informers, app.Spec.StatusInformers...)
			}
		}
	}
	b := &Builder{settings: *s}
	if config == nil {
		config = &configDoc{}
	}
	if err := resolveItems(b, config, answered); err != nil {
		return nil, err
	}
	missing, err := missingRequired(b, config)
	if err != nil {
		return nil, err
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("KOTS does not deploy while required config items are unset: %s (give them in --config-values)", strings.Join(missing, ", "))
	}

	res := &result{Documents: []renderedDoc{}, Dropped: []droppedDoc{}, StatusInformers: []string{}}
	for _, informer := range informers {
		rendered, err := b.String(informer)
		if err != nil {
			// KOTS logs the error and skips the informer.
			fmt.Fprintf(os.Stderr, "kots-render: warning: status informer %q: %v\n", informer, err)
			continue
		}
		if rendered != "" {
			res.StatusInformers = append(res.StatusInformers, rendered)
		}
	}
	for _, f := range files {
		// ExcludeKotsKinds: KOTS's own kinds are taken out before rendering (they are read by KOTS
		// itself and need not be valid YAML once rendered).
		var kept [][]byte
		for _, doc := range splitDocs(f.content) {
			var head simpleGVK
			isKots := yaml.Unmarshal(doc, &head) == nil && isKotsKind(head.APIVersion, head.Kind)
			// --kots-kinds: the opposite, KOTS's own kinds only (the Preflight and SupportBundle it
			// renders for itself before running them), the app's manifests left out.
			if isKots != onlyKotsKinds {
				continue
			}
			kept = append(kept, doc)
		}
		if len(kept) == 0 {
			continue
		}
		rendered, err := b.Render(f.path, string(bytes.Join(kept, []byte("\n---\n"))))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.path, err)
		}
		for i, doc := range splitDocs([]byte(rendered)) {
			source := fmt.Sprintf("%s (document %d)", f.path, i+1)
			ok, err := include(f.path, doc)
			if onlyKotsKinds {
				ok, err = true, nil
			}
			var fatal fatalError
			if errors.As(err, &fatal) {
				return nil, fmt.Errorf("%s: %w", source, err)
			}
			if err != nil {
				res.Dropped = append(res.Dropped, droppedDoc{Source: source, Error: err.Error()})
				continue
			}
			if ok {
				res.Documents = append(res.Documents, renderedDoc{Source: source, Content: string(doc)})
			}
		}
	}
	if pullSecret && s.RegistryHost != "" && s.AppSlug != "" {
		// KOTS writes this Secret beside the app's manifests for a local registry (registry.
		// PullSecretForRegistries, AppSecret); the Job's imagePullSecrets name it.
		secret := map[string]interface{}{
			"apiVersion": "v1",
			"kind":       "Secret",
			"type":       "kubernetes.io/dockerconfigjson",
			"metadata":   map[string]interface{}{"name": pullSecretName(s.AppSlug)},
			"data":       map[string]string{".dockerconfigjson": base64.StdEncoding.EncodeToString(dockerConfigJSON(*s))},
		}
		out, _ := yaml.Marshal(secret)
		res.Documents = append(res.Documents, renderedDoc{Source: "KOTS's pull secret for the local registry", Content: string(out)})
	}
	return res, nil
}
