package engine

// This file reads what a user hands to `kumo apply -f`: a Spec, or plain
// Kubernetes manifests as kubectl takes them (multi-document YAML, JSON,
// kind: List), and turns manifests into a Spec with Kusion-style IDs and an apply
// order taken from the kinds. Reading files and directories is the caller's job;
// this works on their bytes.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	yamlv2 "go.yaml.in/yaml/v2"
)

// Input is one file given to kumo (or standard input, named "-" or "<stdin>").
type Input struct {
	Name string
	Data []byte
}

// document is one YAML or JSON document of an Input.
type document struct {
	source string // the input's name
	index  int    // 1-based, counting non-empty documents only
	line   int    // 1-based line where the document starts
	json   []byte
	// yaml is the document's text when it was YAML, from line start on; col is
	// the column where a JSON document starts, on line.
	yaml  []byte
	start int
	col   int
}

func (d document) where() string {
	return fmt.Sprintf("%s: document %d (line %d)", d.source, d.index, d.line)
}

// splitDocuments splits data into its non-empty documents, converted to JSON: a
// YAML stream separated by "---" lines, or a stream of JSON values. Errors name
// the input and the line in it. Input over the size limit, bytes that are not
// UTF-8 and documents that break the bounds of yamlinput.go are errors.
func splitDocuments(data []byte, source string) ([]document, error) {
	if err := checkText(data, source); err != nil {
		return nil, err
	}
	if t := bytes.TrimSpace(data); len(t) > 0 && t[0] == '{' {
		docs, err := splitJSON(data, source)
		if err == nil {
			return docs, nil
		}
		// JSON documents may also be separated like YAML ones ("---").
		if !bytes.Contains(data, []byte("\n---")) {
			return nil, err
		}
		return splitYAML(data, source)
	}
	return splitYAML(data, source)
}

func splitYAML(data []byte, source string) ([]document, error) {
	var docs []document
	var cur bytes.Buffer
	start := 1
	flush := func(next int) error {
		text := cur.Bytes()
		cur.Reset()
		defer func() { start = next }()
		j, err := yamlToJSON(text, source, start)
		if err != nil {
			return err
		}
		if bytes.Equal(bytes.TrimSpace(j), []byte("null")) {
			return nil // empty, or only comments
		}
		if startsFlow(text) {
			if err := singleValue(text); err != nil {
				return fmt.Errorf("%s: line %d: %w", source, firstContentLine(text, start), err)
			}
		}
		docs = append(docs, document{source: source, index: len(docs) + 1, line: firstContentLine(text, start), json: j,
			yaml: bytes.Clone(text), start: start})
		return nil
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	for i, line := range lines {
		trimmed := bytes.TrimRight(line, " \t\r\n")
		switch {
		case isDocumentStart(trimmed):
			if err := flush(i + 2); err != nil {
				return nil, err
			}
			// "--- key: value": the document starts on the marker's line.
			if rest := bytes.TrimSpace(trimmed[3:]); len(rest) > 0 && rest[0] != '#' {
				cur.Write(rest)
				cur.WriteByte('\n')
				start = i + 1
			}
		case bytes.Equal(trimmed, []byte("...")): // document end marker
			cur.WriteByte('\n')
		case i == 0 && bytes.HasPrefix(trimmed, []byte("%")): // a %YAML directive
			cur.WriteByte('\n')
		default:
			cur.Write(line)
		}
	}
	if err := flush(len(lines) + 1); err != nil {
		return nil, err
	}
	return docs, nil
}

// singleValue refuses a document holding more than one value ("{...}" twice on
// two lines): the YAML parser would return the first and drop the others.
func singleValue(text []byte) error {
	dec := yamlv2.NewDecoder(bytes.NewReader(text))
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil // YAMLToJSON accepted it; nothing more to check
	}
	if err := dec.Decode(&v); err != io.EOF {
		return errors.New("more than one value in one document; separate documents with ---")
	}
	return nil
}

// startsFlow reports whether a document starts with a flow collection, a
// quoted scalar or a node property: only then can a second value follow the
// first (after a block collection or a plain scalar the parser refuses one), so
// only then is singleValue, a second parse, worth its time.
func startsFlow(text []byte) bool {
	for len(text) > 0 {
		line, rest, _ := bytes.Cut(text, []byte("\n"))
		if t := bytes.TrimSpace(line); len(t) > 0 && t[0] != '#' {
			return bytes.IndexByte([]byte("{[\"'&!*|>"), t[0]) >= 0
		}
		text = rest
	}
	return false
}

func isDocumentStart(line []byte) bool {
	return bytes.HasPrefix(line, []byte("---")) && (len(line) == 3 || line[3] == ' ' || line[3] == '\t')
}

// firstContentLine is the line of text's first line that is not blank or a comment.
func firstContentLine(text []byte, start int) int {
	for i, l := range bytes.Split(text, []byte("\n")) {
		if t := bytes.TrimSpace(l); len(t) > 0 && t[0] != '#' {
			return start + i
		}
	}
	return start
}

var yamlLine = regexp.MustCompile(`line (\d+)`)

// yamlErrorAt rewrites a YAML error about a document starting at line start so
// that its line numbers count from the start of the file.
func yamlErrorAt(err error, start int) string {
	msg := strings.TrimPrefix(err.Error(), "error converting YAML to JSON: ")
	return yamlLine.ReplaceAllStringFunc(msg, func(m string) string {
		n, _ := strconv.Atoi(strings.TrimPrefix(m, "line "))
		return "line " + strconv.Itoa(n+start-1)
	})
}

func splitJSON(data []byte, source string) ([]document, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var docs []document
	for {
		// Skip whitespace to find where the next value starts, for its line.
		off := int(dec.InputOffset())
		for off < len(data) && strings.ContainsRune(" \t\r\n", rune(data[off])) {
			off++
		}
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if err == io.EOF {
			return docs, nil
		}
		line := 1 + bytes.Count(data[:off], []byte("\n"))
		if err != nil {
			return nil, fmt.Errorf("%s: line %d: %s", source, line, strings.TrimPrefix(err.Error(), "json: "))
		}
		if bytes.Equal(raw, []byte("null")) {
			continue
		}
		col := off - bytes.LastIndexByte(data[:off], '\n')
		docs = append(docs, document{source: source, index: len(docs) + 1, line: line, json: raw, col: col})
	}
}

// ReadInputs reads what `kumo apply -f` was given: either one Spec (one input
// holding one document with "resources", as ParseSpec reads it), or any number of
// plain Kubernetes objects, converted by ManifestSpec with namespace for the
// objects that have none. manifests reports which it was. Mixing the two, or
// inputs with nothing in them, is an error.
func ReadInputs(inputs []Input, namespace string) (spec *Spec, manifests bool, err error) {
	var objs []ManifestObject
	var specAt string
	for _, in := range inputs {
		docs, err := splitDocuments(in.Data, in.Name)
		if err != nil {
			return nil, false, err
		}
		for _, d := range docs {
			var top any
			if err := decodeJSON(d.json, &top, false); err != nil {
				return nil, false, fmt.Errorf("%s: %s", d.where(), jsonErrorText(err))
			}
			if err := d.checkValues(top); err != nil {
				return nil, false, err
			}
			m, ok := top.(map[string]any)
			switch {
			case !ok:
				return nil, false, fmt.Errorf("%s: not an object: want a Kubernetes object or a Spec", d.where())
			case m["apiVersion"] != nil || m["kind"] != nil:
				objs = append(objs, ManifestObject{Where: d.where(), Object: normalizeMap(m)})
			case m["resources"] != nil:
				if specAt != "" {
					return nil, false, fmt.Errorf("%s and %s are both Specs: give one Spec, or plain Kubernetes manifests", specAt, d.where())
				}
				specAt = d.where()
				spec, err = parseSpecJSON(d.json, in.Name)
				if err != nil {
					return nil, false, err
				}
			default:
				return nil, false, fmt.Errorf("%s: neither a Kubernetes object (apiVersion, kind) nor a Spec (resources)", d.where())
			}
		}
	}
	switch {
	case specAt != "" && len(objs) > 0:
		return nil, false, fmt.Errorf("%s is a Spec but %s is a Kubernetes object: give one Spec, or plain Kubernetes manifests", specAt, objs[0].Where)
	case specAt != "":
		return spec, false, nil
	case len(objs) == 0:
		names := make([]string, len(inputs))
		for i, in := range inputs {
			names[i] = in.Name
		}
		return nil, false, fmt.Errorf("%s: no Kubernetes objects and no Spec", strings.Join(names, ", "))
	}
	spec, err = ManifestSpec(objs, namespace)
	return spec, true, err
}

// ManifestObject is one Kubernetes object of a manifest, and where it was read.
type ManifestObject struct {
	Where  string
	Object map[string]any
}

// ManifestSpec turns Kubernetes objects into a Spec, one Kubernetes resource
// each, as Kusion writes them: ID apiVersion:kind:namespace:name (three parts
// when cluster-scoped), extension GVK. Lists (kind List, or any *List with items)
// are expanded. A namespaced object without a namespace gets namespace ("default"
// when empty); scope is known for built-in kinds and for the kinds of the CRDs
// among objs, other kinds count as namespaced (the runtime asks the cluster
// anyway, and applies a cluster-scoped one without the namespace).
//
// The apply order comes from the kinds, as Helm and Argo CD order an install
// (see kindTiers): each tier of kinds starts once the previous tier that has
// objects is applied (its last object waits for the others of its tier, and the
// next tier waits for that one), so Namespaces come first, then CRDs, ServiceAccounts,
// Secrets and ConfigMaps, storage, Roles, then their bindings, Services,
// workloads, custom resources and webhooks last. Resources come sorted by tier,
// in input order within one.
//
// An object without apiVersion, kind or metadata.name, and two objects that are
// the same (same group, kind, namespace and name), are errors naming where they
// were read.
func ManifestSpec(objs []ManifestObject, namespace string) (*Spec, error) {
	if namespace == "" {
		namespace = "default"
	}
	var flat []ManifestObject
	var errs []error
	for _, o := range objs {
		flat = expandList(o, flat, &errs)
	}
	plain := make([]map[string]any, len(flat))
	for i := range flat {
		plain[i] = flat[i].Object
	}
	crds := crdScopes(plain)

	type item struct {
		res  Resource
		tier int
	}
	items := make([]item, 0, len(flat))
	seen := map[objectKey]string{}
	for _, o := range flat {
		obj := o.Object
		apiVersion, kind := str(obj["apiVersion"]), str(obj["kind"])
		meta, _ := obj["metadata"].(map[string]any)
		gk := groupKindOf(apiVersion, kind)
		if str(meta["name"]) == "" && str(meta["generateName"]) != "" {
			errs = append(errs, fmt.Errorf("%s: %s with metadata.generateName and no name: kumo needs a name to track the object", o.Where, kind))
			continue
		}
		if !isClusterScoped(gk, crds) && str(meta["namespace"]) == "" && str(meta["name"]) != "" {
			meta = maps.Clone(meta)
			meta["namespace"] = namespace
			obj = maps.Clone(obj)
			obj["metadata"] = meta
		}
		id, err := KubernetesIDOf(obj)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", o.Where, err))
			continue
		}
		k, _ := keyOf(obj, crds)
		if first, dup := seen[k]; dup {
			errs = append(errs, fmt.Errorf("%s and %s are the same object (%s %s): give it once", first, o.Where, kind, objectName(k.namespace, k.name)))
			continue
		}
		seen[k] = o.Where
		gvk := gk.group + "/" + strings.TrimPrefix(apiVersion, gk.group+"/") + ", Kind=" + kind
		items = append(items, item{
			res:  Resource{ID: id, Type: Kubernetes, Attributes: obj, Extensions: map[string]any{ExtGVK: gvk}},
			tier: tierOf(gk),
		})
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	slices.SortStableFunc(items, func(a, b item) int { return a.tier - b.tier })
	s := &Spec{Resources: make([]Resource, len(items))}
	// Each tier's last object is its gate: it waits for the other objects of its
	// tier, and the next tier waits for the gate alone. Every tier so starts
	// after the whole previous one with dependsOn linear in the number of
	// objects, where "every object waits for every object of the previous tier"
	// would grow with the product of two tiers' sizes.
	gate := ""
	for start := 0; start < len(items); {
		end := start + 1
		for end < len(items) && items[end].tier == items[start].tier {
			end++
		}
		for i := start; i < end; i++ {
			r := items[i].res
			switch {
			case i < end-1 && gate != "":
				r.DependsOn = []string{gate}
			case i == end-1 && end-start > 1:
				for j := start; j < i; j++ {
					r.DependsOn = append(r.DependsOn, items[j].res.ID)
				}
			case i == end-1 && gate != "":
				r.DependsOn = []string{gate}
			}
			s.Resources[i] = r
		}
		gate, start = items[end-1].res.ID, end
	}
	return s, nil
}

// expandList appends o to out, or its items when it is a List.
func expandList(o ManifestObject, out []ManifestObject, errs *[]error) []ManifestObject {
	kind := str(o.Object["kind"])
	items, isList := o.Object["items"].([]any)
	if !isList || !strings.HasSuffix(kind, "List") {
		return append(out, o)
	}
	for i, it := range items {
		m, ok := it.(map[string]any)
		where := fmt.Sprintf("%s, items[%d]", o.Where, i)
		if !ok {
			*errs = append(*errs, fmt.Errorf("%s: not an object", where))
			continue
		}
		out = expandList(ManifestObject{Where: where, Object: m}, out, errs)
	}
	return out
}
