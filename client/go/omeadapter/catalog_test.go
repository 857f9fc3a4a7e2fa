package omeadapter_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"

	"google.golang.org/protobuf/proto"

	omev1beta1 "github.com/sgl-project/ome/pkg/apis/ome/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/ome-selector/ome-selector/client/go/internal/servertest"
	selectorv1 "github.com/ome-selector/ome-selector/client/go/ome/selector/v1"
	pb "github.com/ome-selector/ome-selector/client/go/ome/v1beta1"
	"github.com/ome-selector/ome-selector/client/go/omeadapter"
)

// doc is one catalog object: its file and its JSON as written.
type doc struct {
	file string
	raw  map[string]any
}

func (d doc) kind() string { s, _ := d.raw["kind"].(string); return s }
func (d doc) name() string {
	m, _ := d.raw["metadata"].(map[string]any)
	s, _ := m["name"].(string)
	return s
}
func (d doc) namespace() string {
	m, _ := d.raw["metadata"].(map[string]any)
	s, _ := m["namespace"].(string)
	return s
}

// loadDocs reads every YAML document under the paths (files in sorted order), skipping
// kustomization files.
func loadDocs(t *testing.T, paths ...string) []doc {
	t.Helper()
	var files []string
	for _, p := range paths {
		err := filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && (strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")) && filepath.Base(path) != "kustomization.yaml" {
				files = append(files, path)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	sort.Strings(files)
	var docs []doc
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
		for {
			var raw map[string]any
			if err := dec.Decode(&raw); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if raw == nil || raw["kind"] == "Kustomization" {
				continue
			}
			docs = append(docs, doc{file: f, raw: raw})
		}
	}
	return docs
}

// withCRDDefaults applies the defaults the API server would (the CRDs': `operator: Equal` and
// `weight: 1` on each supportedModelFormats entry's modelFormat and modelFramework); the fake
// client, like raw YAML, has none.
func withCRDDefaults(raw map[string]any) map[string]any {
	spec, _ := raw["spec"].(map[string]any)
	entries, _ := spec["supportedModelFormats"].([]any)
	for _, e := range entries {
		entry, _ := e.(map[string]any)
		for _, key := range []string{"modelFormat", "modelFramework"} {
			if f, ok := entry[key].(map[string]any); ok {
				if _, ok := f["operator"]; !ok {
					f["operator"] = "Equal"
				}
				if _, ok := f["weight"]; !ok {
					f["weight"] = 1
				}
			}
		}
	}
	return raw
}

// typed decodes raw into OME's Go type for its kind.
func typed(t *testing.T, d doc) client.Object {
	t.Helper()
	var obj client.Object
	switch d.kind() {
	case "ServingRuntime":
		obj = &omev1beta1.ServingRuntime{}
	case "ClusterServingRuntime":
		obj = &omev1beta1.ClusterServingRuntime{}
	case "BaseModel":
		obj = &omev1beta1.BaseModel{}
	case "ClusterBaseModel":
		obj = &omev1beta1.ClusterBaseModel{}
	case "AcceleratorClass":
		obj = &omev1beta1.AcceleratorClass{}
	case "InferenceService":
		obj = &omev1beta1.InferenceService{}
	default:
		t.Fatalf("%s: unexpected kind %q", d.file, d.kind())
	}
	data, err := json.Marshal(d.raw)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, obj); err != nil {
		t.Fatalf("%s %s/%s as %T: %v", d.file, d.kind(), d.name(), obj, err)
	}
	return obj
}

// cacheObject is obj as CacheService's CacheObject (through omeadapter.ToProto).
func cacheObject(t *testing.T, obj client.Object) *selectorv1.CacheObject {
	t.Helper()
	var c selectorv1.CacheObject
	var err error
	switch o := obj.(type) {
	case *omev1beta1.ServingRuntime:
		m := &pb.ServingRuntime{}
		err = omeadapter.ToProto(o, m)
		c.Object = &selectorv1.CacheObject_ServingRuntime{ServingRuntime: m}
	case *omev1beta1.ClusterServingRuntime:
		m := &pb.ClusterServingRuntime{}
		err = omeadapter.ToProto(o, m)
		c.Object = &selectorv1.CacheObject_ClusterServingRuntime{ClusterServingRuntime: m}
	case *omev1beta1.BaseModel:
		m := &pb.BaseModel{}
		err = omeadapter.ToProto(o, m)
		c.Object = &selectorv1.CacheObject_BaseModel{BaseModel: m}
	case *omev1beta1.ClusterBaseModel:
		m := &pb.ClusterBaseModel{}
		err = omeadapter.ToProto(o, m)
		c.Object = &selectorv1.CacheObject_ClusterBaseModel{ClusterBaseModel: m}
	case *omev1beta1.AcceleratorClass:
		m := &pb.AcceleratorClass{}
		err = omeadapter.ToProto(o, m)
		c.Object = &selectorv1.CacheObject_AcceleratorClass{AcceleratorClass: m}
	case *omev1beta1.InferenceService:
		m := &pb.InferenceService{}
		err = omeadapter.ToProto(o, m)
		c.Object = &selectorv1.CacheObject_InferenceService{InferenceService: m}
	default:
		t.Fatalf("no CacheObject for %T", obj)
	}
	if err != nil {
		t.Fatal(err)
	}
	return &c
}

// scheme is OME's API scheme (what the manager's client uses).
func scheme(t *testing.T) *runtime.Scheme {
	s := runtime.NewScheme()
	if err := omev1beta1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

func fakeClient(t *testing.T, objs []client.Object) client.Client {
	return &listCache{Client: fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(objs...).Build(), lists: map[string]client.ObjectList{}}
}

// listCache answers repeated runtime Lists from the fake client's first answer (deep copies):
// the fake client JSON-decodes every object on each List, and OME lists all runtimes two or
// three times per call. The objects never change during a comparison.
type listCache struct {
	client.Client
	mu    sync.Mutex
	lists map[string]client.ObjectList
}

func (c *listCache) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	lo := (&client.ListOptions{}).ApplyOptions(opts)
	key := fmt.Sprintf("%T/%s", list, lo.Namespace)
	c.mu.Lock()
	defer c.mu.Unlock()
	cached, ok := c.lists[key]
	if !ok {
		if err := c.Client.List(ctx, list, opts...); err != nil {
			return err
		}
		c.lists[key] = list.DeepCopyObject().(client.ObjectList)
		return nil
	}
	switch l := list.(type) {
	case *omev1beta1.ServingRuntimeList:
		cached.(*omev1beta1.ServingRuntimeList).DeepCopyInto(l)
	case *omev1beta1.ClusterServingRuntimeList:
		cached.(*omev1beta1.ClusterServingRuntimeList).DeepCopyInto(l)
	default:
		return c.Client.List(ctx, list, opts...)
	}
	return nil
}

// catalog is the test cluster of ome-cluster/README.md: the catalog runtimes, then
// ome-cluster (later definitions of a name win, as the server's loader does), with the CRD
// defaults applied; and the models to select for: every catalog ClusterBaseModel as the
// catalog writes it and as ome-cluster fills it in.
type catalog struct {
	objects []client.Object
	models  []namedModel
}

type namedModel struct {
	source string // "catalog" or "filled"
	name   string
	spec   omev1beta1.BaseModelSpec
}

func loadCatalog(t *testing.T) catalog {
	shared := servertest.Shared(t)
	byKey := map[string]client.Object{}
	var order []string
	for _, d := range loadDocs(t, filepath.Join(shared, "ome-catalog", "runtimes"), filepath.Join(shared, "ome-cluster")) {
		if d.kind() == "InferenceService" {
			continue
		}
		key := d.kind() + "/" + d.namespace() + "/" + d.name()
		if _, ok := byKey[key]; !ok {
			order = append(order, key)
		}
		byKey[key] = typed(t, doc{file: d.file, raw: withCRDDefaults(d.raw)})
	}
	var c catalog
	for _, k := range order {
		c.objects = append(c.objects, byKey[k])
	}
	for _, source := range []struct{ name, path string }{
		{"catalog", filepath.Join(shared, "ome-catalog", "models")},
		{"filled", filepath.Join(shared, "ome-cluster", "clusterbasemodels-filled.yaml")},
	} {
		for _, d := range loadDocs(t, source.path) {
			switch m := typed(t, d).(type) {
			case *omev1beta1.ClusterBaseModel:
				c.models = append(c.models, namedModel{source.name, m.Name, m.Spec})
			case *omev1beta1.BaseModel:
				c.models = append(c.models, namedModel{source.name, m.Namespace + "/" + m.Name, m.Spec})
			}
		}
	}
	return c
}

// protoOf is the object a CacheObject holds.
func protoOf(c *selectorv1.CacheObject) proto.Message {
	switch o := c.GetObject().(type) {
	case *selectorv1.CacheObject_ServingRuntime:
		return o.ServingRuntime
	case *selectorv1.CacheObject_ClusterServingRuntime:
		return o.ClusterServingRuntime
	case *selectorv1.CacheObject_BaseModel:
		return o.BaseModel
	case *selectorv1.CacheObject_ClusterBaseModel:
		return o.ClusterBaseModel
	case *selectorv1.CacheObject_AcceleratorClass:
		return o.AcceleratorClass
	case *selectorv1.CacheObject_InferenceService:
		return o.InferenceService
	}
	return nil
}

// typedEmpty is a new zero object of obj's type.
func typedEmpty(obj client.Object) client.Object {
	return reflect.New(reflect.TypeOf(obj).Elem()).Interface().(client.Object)
}
