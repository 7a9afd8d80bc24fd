package main

// The config screen's answers, resolved the way KOTS's newConfigContext does: an item the
// customer answered keeps that value (its default is still rendered), any other item gets its
// rendered `value`; ConfigOption then returns the value when it is not empty, else the default.

import (
	"fmt"
	"os"

	yaml "go.yaml.in/yaml/v2"
)

type ItemValue struct {
	Value    string
	Default  string
	Filename string
}

type configItem struct {
	Name     string       `yaml:"name"`
	Type     string       `yaml:"type"`
	Default  interface{}  `yaml:"default"`
	Value    interface{}  `yaml:"value"`
	Filename string       `yaml:"filename"`
	ReadOnly bool         `yaml:"readonly"`
	Required bool         `yaml:"required"`
	Hidden   bool         `yaml:"hidden"`
	When     interface{}  `yaml:"when"`
	Items    []configItem `yaml:"items"` // radio/select children
}

type configDoc struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Spec       struct {
		Groups []struct {
			Name  string       `yaml:"name"`
			When  interface{}  `yaml:"when"`
			Items []configItem `yaml:"items"`
		} `yaml:"groups"`
	} `yaml:"spec"`
}

type configValuesDoc struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Spec       struct {
		Values map[string]struct {
			Value          string `yaml:"value"`
			ValuePlaintext string `yaml:"valuePlaintext"`
			Default        string `yaml:"default"`
			Filename       string `yaml:"filename"`
		} `yaml:"values"`
	} `yaml:"spec"`
}

// multitype.BoolOrString: KOTS keeps `default: 2` and `default: "2"` alike as the string "2".
func scalarString(v interface{}) string {
	switch t := v.(type) {
	case nil:
		return ""
	case string:
		return t
	case bool:
		if t {
			return "1"
		}
		return "0"
	default:
		return fmt.Sprint(t)
	}
}

// editable mirrors isReadOnly: these item types hold a customer's answer; others (label,
// heading) always take their rendered value.
var editableTypes = map[string]bool{"": true, "bool": true, "file": true, "password": true, "select": true,
	"select_many": true, "select_one": true, "radio": true, "dropdown": true, "text": true, "textarea": true}

func readConfigValues(path string) (map[string]ItemValue, error) {
	values := map[string]ItemValue{}
	if path == "" {
		return values, nil
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc configValuesDoc
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if doc.APIVersion != "kots.io/v1beta1" || doc.Kind != "ConfigValues" {
		return nil, fmt.Errorf("%s: expected apiVersion kots.io/v1beta1, kind ConfigValues; found %q %q", path, doc.APIVersion, doc.Kind)
	}
	for name, v := range doc.Spec.Values {
		// createConfigValues: value, or valuePlaintext when value is empty (passwords).
		value := v.Value
		if value == "" {
			value = v.ValuePlaintext
		}
		values[name] = ItemValue{Value: value, Default: v.Default, Filename: v.Filename}
	}
	return values, nil
}

// resolveItems fills b.items from the Config. KOTS orders items by a dependency graph of their
// templates; this renders them in file order, which is the same for defaults that read no other
// item (true of kots/).
func resolveItems(b *Builder, config *configDoc, answered map[string]ItemValue) error {
	b.items = answered
	for _, g := range config.Spec.Groups {
		for _, item := range g.Items {
			def, err := b.String(scalarString(item.Default))
			if err != nil {
				return fmt.Errorf("config item %s: default: %w", item.Name, err)
			}
			if !item.ReadOnly && editableTypes[item.Type] {
				if v, ok := answered[item.Name]; ok {
					b.items[item.Name] = ItemValue{Value: v.Value, Default: def, Filename: v.Filename}
					continue
				}
			}
			val, err := b.String(scalarString(item.Value))
			if err != nil {
				return fmt.Errorf("config item %s: value: %w", item.Name, err)
			}
			file, _ := b.String(item.Filename)
			b.items[item.Name] = ItemValue{Value: val, Default: def, Filename: file}
		}
	}
	return nil
}

// missingRequired is kotsadmconfig.GetMissingRequiredConfig on the rendered Config: a required
// item that is shown (not hidden, its `when` and its group's not "false") with neither a value
// nor a default. KOTS does not deploy a version while one is missing.
func missingRequired(b *Builder, config *configDoc) ([]string, error) {
	var missing []string
	for _, g := range config.Spec.Groups {
		when, err := b.String(scalarString(g.When))
		if err != nil {
			return nil, fmt.Errorf("config group %s: when: %w", g.Name, err)
		}
		if when == "false" {
			continue
		}
		for _, item := range g.Items {
			if !item.Required || item.Hidden {
				continue
			}
			when, err := b.String(scalarString(item.When))
			if err != nil {
				return nil, fmt.Errorf("config item %s: when: %w", item.Name, err)
			}
			if when == "false" {
				continue
			}
			if v := b.items[item.Name]; v.Value == "" && v.Default == "" {
				missing = append(missing, item.Name)
			}
		}
	}
	return missing, nil
}
