package cachesync

import (
	"encoding/json"
	"fmt"
	"strconv"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	selectorv1 "github.com/ome-selector/ome-selector/client/go/ome/selector/v1"
)

type protoMessage = proto.Message

// Kubernetes int-or-string quantities that the proto types as `string`, per kind, as JSON-name
// paths ("[]": every item of a list, "{}": every value of a map). The API server keeps them as
// the client wrote them, so a number becomes its text before protojson reads it (the Python
// manifest loader does the same).
var quantityPaths = map[string][][]string{
	"ServingRuntime":        {ratios},
	"ClusterServingRuntime": {ratios},
	"AcceleratorClass": {
		{"spec", "capabilities", "memoryGB"},
		{"spec", "capabilities", "memoryBandwidthGBps"},
		{"spec", "cost", "perHour"},
		{"spec", "cost", "spotPerHour"},
		{"spec", "cost", "perMillionTokens"},
		{"spec", "resources", "[]", "quantity"},
	},
}

var ratios = []string{"spec", "scalingPolicy", "proportional", "ratios", "{}"}

var unmarshal = protojson.UnmarshalOptions{DiscardUnknown: true}

// Convert turns an API object (its JSON as the API server serves it) into the service's
// CacheObject: quantities made text, `metadata.managedFields` dropped, fields the proto does not
// model ignored. Errors name the object and protojson's reason (a field of the wrong type).
func Convert(kind Kind, obj *unstructured.Unstructured) (*selectorv1.CacheObject, error) {
	content := obj.UnstructuredContent()
	if paths := quantityPaths[kind.GVK.Kind]; len(paths) > 0 || hasManagedFields(content) {
		content = runtimeDeepCopy(content)
		if meta, ok := content["metadata"].(map[string]any); ok {
			delete(meta, "managedFields")
		}
		for _, path := range paths {
			quantityToText(content, path)
		}
	}
	data, err := json.Marshal(content)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", kind.GVK.Kind, objectName(obj), err)
	}
	msg := kind.newMessage()
	if err := unmarshal.Unmarshal(data, msg); err != nil {
		return nil, fmt.Errorf("%s %s: %w", kind.GVK.Kind, objectName(obj), err)
	}
	return kind.wrap(msg), nil
}

func objectName(obj *unstructured.Unstructured) string {
	if ns := obj.GetNamespace(); ns != "" {
		return ns + "/" + obj.GetName()
	}
	return obj.GetName()
}

func hasManagedFields(content map[string]any) bool {
	meta, ok := content["metadata"].(map[string]any)
	if !ok {
		return false
	}
	_, ok = meta["managedFields"]
	return ok
}

func runtimeDeepCopy(content map[string]any) map[string]any {
	return runtimeDeepCopyValue(content).(map[string]any)
}

func runtimeDeepCopyValue(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, item := range t {
			out[k] = runtimeDeepCopyValue(item)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, item := range t {
			out[i] = runtimeDeepCopyValue(item)
		}
		return out
	default:
		return v
	}
}

// quantityToText turns each number at path under node into its text, in place.
func quantityToText(node any, path []string) {
	head, rest := path[0], path[1:]
	visit := func(get func() any, set func(any)) {
		if len(rest) > 0 {
			quantityToText(get(), rest)
			return
		}
		if text, ok := numberText(get()); ok {
			set(text)
		}
	}
	switch head {
	case "[]":
		list, _ := node.([]any)
		for i := range list {
			visit(func() any { return list[i] }, func(v any) { list[i] = v })
		}
	case "{}":
		m, _ := node.(map[string]any)
		for k := range m {
			visit(func() any { return m[k] }, func(v any) { m[k] = v })
		}
	default:
		m, _ := node.(map[string]any)
		if _, ok := m[head]; ok {
			visit(func() any { return m[head] }, func(v any) { m[head] = v })
		}
	}
}

func numberText(v any) (string, bool) {
	switch n := v.(type) {
	case int64:
		return strconv.FormatInt(n, 10), true
	case int:
		return strconv.Itoa(n), true
	case float64:
		return strconv.FormatFloat(n, 'g', -1, 64), true
	case json.Number:
		return n.String(), true
	}
	return "", false
}

// KeyOf is the cache key of an API object of kind.
func KeyOf(kind Kind, obj interface {
	GetNamespace() string
	GetName() string
}) Key {
	ns := ""
	if kind.Namespaced {
		ns = obj.GetNamespace()
	}
	return Key{Kind: kind.ObjectKind, Namespace: ns, Name: obj.GetName()}
}
