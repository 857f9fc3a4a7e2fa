package cachesync

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// sharedDir is ../shared beside the repository (the OME catalog and test cluster).
func sharedDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("../../../../shared")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "ome-catalog")); err != nil {
		t.Fatalf("the OME catalog is not at %s (../shared beside the repository): %v", dir, err)
	}
	return dir
}

func TestConvertQuantityNumbersBecomeText(t *testing.T) {
	kind, _ := KindOf(Kinds[4].ObjectKind)
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "ome.io/v1beta1", "kind": "AcceleratorClass",
		"metadata": map[string]any{"name": "h100", "managedFields": []any{map[string]any{"manager": "kubectl"}}},
		"spec": map[string]any{
			"capabilities": map[string]any{"memoryGB": int64(80)},
			"cost":         map[string]any{"perHour": 2.5},
		},
	}}
	obj, err := Convert(kind, u)
	if err != nil {
		t.Fatal(err)
	}
	ac := obj.GetAcceleratorClass()
	if got := ac.GetSpec().GetCapabilities().GetMemoryGb(); got != "80" {
		t.Fatalf("memoryGB = %q, want \"80\"", got)
	}
	if got := ac.GetSpec().GetCost().GetPerHour(); got != "2.5" {
		t.Fatalf("perHour = %q, want \"2.5\"", got)
	}
	if _, still := u.Object["metadata"].(map[string]any)["managedFields"]; !still {
		t.Fatal("Convert changed the informer's object (managedFields removed from it)")
	}
}

// Every object of the catalog and ome-cluster converts (as the API server would serve them).
func TestConvertCatalogAndCluster(t *testing.T) {
	shared := sharedDir(t)
	counts := map[string]int{}
	for _, root := range []string{filepath.Join(shared, "ome-catalog", "runtimes"), filepath.Join(shared, "ome-catalog", "models"), filepath.Join(shared, "ome-cluster")} {
		for _, u := range ReadManifests(t, root) {
			kind, ok := kindByGVK(u)
			if !ok {
				continue
			}
			if _, err := Convert(kind, u); err != nil {
				t.Errorf("%v", err)
			}
			counts[kind.GVK.Kind]++
		}
	}
	if counts["ClusterServingRuntime"] == 0 || counts["ClusterBaseModel"] == 0 || counts["InferenceService"] == 0 || counts["AcceleratorClass"] != 4 {
		t.Fatalf("counts = %v: want runtimes, models, InferenceServices and 4 AcceleratorClasses", counts)
	}
}

func kindByGVK(u *unstructured.Unstructured) (Kind, bool) {
	for _, k := range Kinds {
		if k.GVK == u.GroupVersionKind() {
			return k, true
		}
	}
	return Kind{}, false
}

// ReadManifests reads every YAML document of the .yaml files under root (sorted paths), skipping
// kustomization files.
func ReadManifests(t *testing.T, root string) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") || d.Name() == "kustomization.yaml" {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
		for {
			u := &unstructured.Unstructured{}
			if err := dec.Decode(&u.Object); err != nil {
				if err == io.EOF {
					return nil
				}
				return err
			}
			if len(u.Object) > 0 {
				out = append(out, u)
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
