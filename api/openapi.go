package api

import (
	"encoding/json"
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The OpenAPI 3 document is built from routes, the table that registers the
// handlers, and its schemas from the Go types the handlers encode and
// decode: a route cannot be served without being described, nor described
// without being served, and a field cannot change without the schema.

// Version is the API's version as the document states it.
const Version = "1.0.0"

type schemas struct {
	defs map[string]any
}

var (
	timeType     = reflect.TypeFor[time.Time]()
	durationType = reflect.TypeFor[time.Duration]()
	rawType      = reflect.TypeFor[json.RawMessage]()
)

// schemaOf is the JSON schema of t, named types as components.
func (s *schemas) schemaOf(t reflect.Type) map[string]any {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t {
	case timeType:
		return map[string]any{"type": "string", "format": "date-time"}
	case durationType:
		return map[string]any{"type": "integer", "description": "nanoseconds"}
	case rawType:
		return map[string]any{}
	}
	switch t.Kind() {
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer"}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return map[string]any{"type": "string", "format": "byte"}
		}
		return map[string]any{"type": "array", "items": s.schemaOf(t.Elem())}
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": s.schemaOf(t.Elem())}
	case reflect.Interface:
		return map[string]any{}
	case reflect.Struct:
		name := schemaName(t)
		if name == "" {
			return s.object(t)
		}
		ref := map[string]any{"$ref": "#/components/schemas/" + name}
		if _, ok := s.defs[name]; !ok {
			s.defs[name] = nil // being built: a recursive type refers to itself
			s.defs[name] = s.object(t)
		}
		return ref
	}
	return map[string]any{}
}

// schemaName names a named struct type by its package and name; "" for an
// unnamed one.
func schemaName(t reflect.Type) string {
	if t.Name() == "" {
		return ""
	}
	pkg := t.PkgPath()
	pkg = pkg[strings.LastIndex(pkg, "/")+1:]
	name := t.Name()
	if i := strings.IndexByte(name, '['); i >= 0 {
		name = name[:i]
	}
	if pkg == "api" {
		return strings.ToUpper(name[:1]) + name[1:]
	}
	return strings.ToUpper(pkg[:1]) + pkg[1:] + name
}

// object is a struct's schema: its JSON fields, embedded structs' flattened.
func (s *schemas) object(t reflect.Type) map[string]any {
	props := map[string]any{}
	var required []string
	s.fields(t, props, &required)
	o := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		slices.Sort(required)
		o["required"] = required
	}
	return o
}

func (s *schemas) fields(t reflect.Type, props map[string]any, required *[]string) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if f.Anonymous && name == "" && ft.Kind() == reflect.Struct {
			s.fields(ft, props, required)
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		props[name] = s.schemaOf(f.Type)
		if !strings.Contains(opts, "omitempty") && !strings.Contains(opts, "omitzero") && f.Type.Kind() != reflect.Pointer &&
			f.Type.Kind() != reflect.Slice && f.Type.Kind() != reflect.Map {
			*required = append(*required, name)
		}
	}
}

var pathParam = regexp.MustCompile(`\{([a-z]+)\}`)

// openAPIDocument is the OpenAPI 3.0 document of routes.
func openAPIDocument() ([]byte, error) {
	s := &schemas{defs: map[string]any{}}
	problem := s.schemaOf(reflect.TypeFor[Problem]())
	paths := map[string]map[string]any{}
	for _, rt := range routes {
		op := map[string]any{
			"operationId": rt.id,
			"summary":     rt.summary,
			"tags":        []string{tagOf(rt.path)},
		}
		if rt.action != "" {
			role, _ := rt.action.Needs()
			op["description"] = "Needs the right to " + string(rt.action) + " (role " + string(role) + ") on the project/workspace."
			op["x-kumo-action"] = string(rt.action)
		}
		var params []any
		for _, m := range pathParam.FindAllStringSubmatch(rt.path, -1) {
			params = append(params, map[string]any{"name": m[1], "in": "path", "required": true,
				"description": pathParams[m[1]], "schema": map[string]any{"type": "string"}})
		}
		for _, q := range rt.query {
			params = append(params, map[string]any{"name": q.name, "in": "query", "required": q.required,
				"description": q.desc, "schema": map[string]any{"type": q.typ}})
		}
		if rt.id == "startRun" {
			params = append(params, map[string]any{"name": IdempotencyHeader, "in": "header", "required": false,
				"description": "retrying the request with the same key (same caller) starts no second run and answers the first one",
				"schema":      map[string]any{"type": "string", "maxLength": maxIdempotencyKey}})
		}
		if rt.method == http.MethodGet {
			params = append(params, map[string]any{"name": "If-None-Match", "in": "header", "required": false,
				"description": "an ETag this operation returned: 304 Not Modified while it still holds",
				"schema":      map[string]any{"type": "string"}})
		}
		if len(params) > 0 {
			op["parameters"] = params
		}
		if rt.body != nil {
			op["requestBody"] = map[string]any{"required": rt.id != "cancelRun" && rt.id != "rejectRun",
				"content": map[string]any{"application/json": map[string]any{"schema": s.schemaOf(reflect.TypeOf(rt.body))}}}
		}
		ok := map[string]any{"description": http.StatusText(rt.status)}
		if rt.status == http.StatusOK && rt.method == http.MethodGet {
			ok["headers"] = map[string]any{"ETag": map[string]any{"schema": map[string]any{"type": "string"}}}
		}
		produces := rt.produces
		if len(produces) == 0 && rt.result != nil {
			produces = []string{"application/json"}
		}
		if len(produces) > 0 {
			content := map[string]any{}
			for _, ct := range produces {
				var sch map[string]any
				switch {
				case ct == "application/json" && rt.result != nil:
					sch = s.schemaOf(reflect.TypeOf(rt.result))
				default:
					sch = map[string]any{"type": "string"}
				}
				content[ct] = map[string]any{"schema": sch}
			}
			ok["content"] = content
		}
		responses := map[string]any{strconv.Itoa(rt.status): ok}
		if rt.method == http.MethodGet {
			responses["304"] = map[string]any{"description": "Not Modified: the If-None-Match ETag still holds"}
		}
		for _, pt := range append(slices.Clone(every), rt.errors...) {
			code := strconv.Itoa(problemTypes[pt].status)
			desc := string(pt)
			if prior, ok := responses[code].(map[string]any); ok {
				desc = prior["description"].(string) + ", " + desc
			}
			responses[code] = map[string]any{"description": desc,
				"content": map[string]any{"application/problem+json": map[string]any{"schema": problem}}}
		}
		op["responses"] = responses
		path := Prefix + rt.path
		if paths[path] == nil {
			paths[path] = map[string]any{}
		}
		paths[path][strings.ToLower(rt.method)] = op
	}
	doc := map[string]any{
		"openapi": "3.0.3",
		"info": map[string]any{
			"title":   "kumo HTTP API",
			"version": Version,
			"description": "Drive kumo over HTTP: start generate, preview, apply, destroy, rollback and drift-check runs, follow them, " +
				"approve their plans, browse projects, workspaces, releases and drift. Authenticate with `Authorization: Bearer <kumo token or OIDC token>` " +
				"(or the Web UI's session cookie). Errors are application/problem+json with a stable `type`.",
		},
		"paths": paths,
		"components": map[string]any{
			"schemas": s.defs,
			"securitySchemes": map[string]any{
				"bearer":  map[string]any{"type": "http", "scheme": "bearer"},
				"session": map[string]any{"type": "apiKey", "in": "cookie", "name": "kumo_session"},
			},
		},
		"security": []any{map[string]any{"bearer": []string{}}, map[string]any{"session": []string{}}},
	}
	return json.MarshalIndent(doc, "", "  ")
}

// tagOf groups operations by their first path segment.
func tagOf(path string) string {
	seg := strings.Split(strings.TrimPrefix(path, "/"), "/")
	switch {
	case len(seg) >= 4 && seg[2] == "workspaces":
		if len(seg) >= 5 {
			return seg[4]
		}
	case len(seg) >= 3 && seg[0] == "projects":
		return seg[2]
	}
	return seg[0]
}
