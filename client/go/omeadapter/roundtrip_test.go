package omeadapter_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/ome-selector/ome-selector/client/go/internal/servertest"
	"github.com/ome-selector/ome-selector/client/go/omeadapter"
)

// modelled says whether the JSON path (list indices as []) names a field of the proto message
// md: a path the round trip loses must not be (the protos drop only what they do not model).
func modelled(md protoreflect.MessageDescriptor, path string) bool {
	if md.FullName() == "google.protobuf.Struct" || md.FullName() == "google.protobuf.Timestamp" || path == "" {
		return true
	}
	head, rest, _ := strings.Cut(path, ".")
	fd := md.Fields().ByJSONName(strings.TrimSuffix(head, "[]"))
	if fd == nil {
		return false
	}
	switch {
	case fd.IsMap():
		if fd.MapValue().Message() == nil {
			return true // the rest is the key
		}
		segs := strings.Split(rest, ".")
		for i := 1; i <= len(segs); i++ { // keys may contain dots
			if modelled(fd.MapValue().Message(), strings.Join(segs[i:], ".")) {
				return true
			}
		}
		return false
	case fd.Message() != nil:
		return modelled(fd.Message(), rest)
	default:
		return rest == ""
	}
}

// leaves flattens JSON into its leaf paths (list indices as []).
func leaves(prefix string, v any, out map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			return
		}
		for k, e := range x {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			leaves(p, e, out)
		}
	case []any:
		for _, e := range x {
			leaves(prefix+"[]", e, out)
		}
	case nil:
	default:
		out[prefix] = true
	}
}

func jsonLeaves(t *testing.T, obj any) map[string]bool {
	data, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	var tree any
	if err := json.Unmarshal(data, &tree); err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	leaves("", tree, out)
	return out
}

// The kinds whose whole spec the protos carry (protos/crdgen.py): nothing under `spec` may be lost.
var wholeSpec = map[string]bool{"ServingRuntime": true, "ClusterServingRuntime": true, "InferenceService": true}

func TestRoundTripEveryCatalogObject(t *testing.T) {
	shared := servertest.Shared(t)
	docs := loadDocs(t, filepath.Join(shared, "ome-catalog", "runtimes"), filepath.Join(shared, "ome-catalog", "models"), filepath.Join(shared, "ome-cluster"))
	dropped := map[string]int{}
	kinds := map[string]int{}
	for _, d := range docs {
		obj := typed(t, d)
		kinds[d.kind()]++
		p1 := cacheObject(t, obj)
		// proto → OME → proto gives the same message.
		back := typedEmpty(obj)
		if err := omeadapter.FromProto(protoOf(p1), back); err != nil {
			t.Fatalf("%s %s/%s: %v", d.file, d.kind(), d.name(), err)
		}
		if p2 := cacheObject(t, back); !proto.Equal(p1, p2) {
			t.Errorf("%s %s/%s: proto → OME → proto differs:\n%v\n%v", d.file, d.kind(), d.name(), p1, p2)
		}
		// What the protos do not model is all that is lost (listed in the log, and in convert.go).
		after := jsonLeaves(t, back)
		for path := range jsonLeaves(t, obj) {
			if after[path] {
				continue
			}
			if modelled(protoOf(p1).ProtoReflect().Descriptor(), path) {
				t.Errorf("%s %s/%s: %s is modelled by the protos but lost in the round trip", d.file, d.kind(), d.name(), path)
			}
			if wholeSpec[d.kind()] && strings.HasPrefix(path, "spec.") {
				t.Errorf("%s %s/%s: %s is lost, but the protos carry the whole spec of this kind", d.file, d.kind(), d.name(), path)
			}
			dropped[path]++
		}
	}
	if len(docs) < 600 {
		t.Fatalf("only %d catalog objects read", len(docs))
	}
	var lines []string
	for p, n := range dropped {
		lines = append(lines, fmt.Sprintf("%-60s %d", p, n))
	}
	sort.Strings(lines)
	t.Logf("%d objects %v; dropped paths (objects):\n%s", len(docs), kinds, strings.Join(lines, "\n"))
}
