package main

// What KOTS does with a rendered file (pkg/base/replicated.go renderReplicated): split it into
// documents (util.ConvertToSingleDocs) and keep each that ShouldBeIncludedInBaseKustomization
// accepts. A document that go-yaml v2 cannot parse, or a .yaml document without apiVersion and
// kind, is NOT deployed: KOTS records it in the version's ErrorFiles and deploys the rest, so a
// broken Secret silently leaves the Job waiting for a mount that never appears.

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"

	yaml "go.yaml.in/yaml/v2"
)

var yamlDocSeparatorLine = regexp.MustCompile(`(?m)^---[ \t]*(#.*)?$`)

func splitDocs(content []byte) [][]byte {
	content = bytes.ReplaceAll(content, []byte("\r\n"), []byte("\n"))
	content = yamlDocSeparatorLine.ReplaceAll(content, []byte("---"))
	var docs [][]byte
	for _, d := range bytes.Split(content, []byte("\n---\n")) {
		if len(bytes.TrimSpace(d)) == 0 {
			continue
		}
		docs = append(docs, d)
	}
	return docs
}

type simpleGVK struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name        string                 `yaml:"name"`
		Annotations map[string]interface{} `yaml:"annotations"`
	} `yaml:"metadata"`
}

// isKotsKind is kotsutil.IsKotsKind: KOTS's own kinds are read by KOTS, never deployed.
func isKotsKind(apiVersion, kind string) bool {
	switch apiVersion {
	case "kots.io/v1beta1", "kots.io/v1beta2", "troubleshoot.sh/v1beta2", "troubleshoot.replicated.com/v1beta1",
		"cluster.kurl.sh/v1beta1", "kurl.sh/v1beta1", "embeddedcluster.replicated.com/v1beta1":
		return true
	case "velero.io/v1":
		return kind == "Backup" || kind == "Restore"
	case "app.k8s.io/v1beta1":
		return true
	}
	return false
}

// fatalError is an error KOTS does not treat as a YAML error: the whole render fails.
type fatalError struct{ error }

// include is ShouldBeIncludedInBaseKustomization(excludeKotsKinds=true). A non-nil error means
// KOTS drops the document as a YAML error; a fatalError fails the render.
func include(path string, doc []byte) (bool, error) {
	isYAML := filepath.Ext(path) == ".yaml" || filepath.Ext(path) == ".yml"
	var m interface{}
	if err := yaml.Unmarshal(doc, &m); err != nil {
		if isYAML {
			return false, err
		}
		return false, nil
	}
	var o simpleGVK
	_ = yaml.Unmarshal(doc, &o)
	if o.APIVersion == "" || o.Kind == "" {
		if isYAML && m != nil {
			return false, errors.New("not a kubernetes document")
		}
		return false, nil
	}
	if isKotsKind(o.APIVersion, o.Kind) {
		return false, nil
	}
	// kots.io/exclude: a bool or a string strconv.ParseBool accepts.
	if v, ok := o.Metadata.Annotations["kots.io/exclude"]; ok {
		switch t := v.(type) {
		case bool:
			return !t, nil
		case string:
			b, err := strconv.ParseBool(t)
			if err != nil {
				return false, fatalError{fmt.Errorf("object %s: unable to parse %s as bool in exclude annotation", o.Metadata.Name, t)}
			}
			return !b, nil
		default:
			return false, fatalError{fmt.Errorf("object %s: unexpected type in exclude annotation: %T", o.Metadata.Name, v)}
		}
	}
	return true, nil
}
