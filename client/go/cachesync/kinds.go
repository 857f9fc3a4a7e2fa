package cachesync

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"

	selectorv1 "github.com/ome-selector/ome-selector/client/go/ome/selector/v1"
	omev1beta1 "github.com/ome-selector/ome-selector/client/go/ome/v1beta1"
)

// Label OME puts on its runtime revisions (ControllerRevisions of apps/v1 in OME's namespace):
// the name of the runtime the revision belongs to (runtime-revisions.md). ControllerRevisions
// without it (a StatefulSet's or a DaemonSet's) are not synced.
const RuntimeOfLabel = "ome.io/runtime-of"

// Kind is one synced kind: its API group/version/kind, the service's ObjectKind, and whether it
// is namespaced.
type Kind struct {
	GVK        schema.GroupVersionKind
	ObjectKind selectorv1.ObjectKind
	Namespaced bool
	// wrap puts the parsed message into a CacheObject; newMessage makes an empty one.
	newMessage func() protoMessage
	wrap       func(protoMessage) *selectorv1.CacheObject
}

// Kinds lists every kind the service caches, in ObjectKind order: ServingRuntime,
// ClusterServingRuntime, BaseModel, ClusterBaseModel, AcceleratorClass, InferenceService
// (ome.io/v1beta1) and runtime revisions (ControllerRevision, apps/v1).
var Kinds = []Kind{
	{
		GVK: ome("ServingRuntime"), ObjectKind: selectorv1.ObjectKind_OBJECT_KIND_SERVING_RUNTIME, Namespaced: true,
		newMessage: func() protoMessage { return &omev1beta1.ServingRuntime{} },
		wrap: func(m protoMessage) *selectorv1.CacheObject {
			return &selectorv1.CacheObject{Object: &selectorv1.CacheObject_ServingRuntime{ServingRuntime: m.(*omev1beta1.ServingRuntime)}}
		},
	},
	{
		GVK: ome("ClusterServingRuntime"), ObjectKind: selectorv1.ObjectKind_OBJECT_KIND_CLUSTER_SERVING_RUNTIME,
		newMessage: func() protoMessage { return &omev1beta1.ClusterServingRuntime{} },
		wrap: func(m protoMessage) *selectorv1.CacheObject {
			return &selectorv1.CacheObject{Object: &selectorv1.CacheObject_ClusterServingRuntime{ClusterServingRuntime: m.(*omev1beta1.ClusterServingRuntime)}}
		},
	},
	{
		GVK: ome("BaseModel"), ObjectKind: selectorv1.ObjectKind_OBJECT_KIND_BASE_MODEL, Namespaced: true,
		newMessage: func() protoMessage { return &omev1beta1.BaseModel{} },
		wrap: func(m protoMessage) *selectorv1.CacheObject {
			return &selectorv1.CacheObject{Object: &selectorv1.CacheObject_BaseModel{BaseModel: m.(*omev1beta1.BaseModel)}}
		},
	},
	{
		GVK: ome("ClusterBaseModel"), ObjectKind: selectorv1.ObjectKind_OBJECT_KIND_CLUSTER_BASE_MODEL,
		newMessage: func() protoMessage { return &omev1beta1.ClusterBaseModel{} },
		wrap: func(m protoMessage) *selectorv1.CacheObject {
			return &selectorv1.CacheObject{Object: &selectorv1.CacheObject_ClusterBaseModel{ClusterBaseModel: m.(*omev1beta1.ClusterBaseModel)}}
		},
	},
	{
		GVK: ome("AcceleratorClass"), ObjectKind: selectorv1.ObjectKind_OBJECT_KIND_ACCELERATOR_CLASS,
		newMessage: func() protoMessage { return &omev1beta1.AcceleratorClass{} },
		wrap: func(m protoMessage) *selectorv1.CacheObject {
			return &selectorv1.CacheObject{Object: &selectorv1.CacheObject_AcceleratorClass{AcceleratorClass: m.(*omev1beta1.AcceleratorClass)}}
		},
	},
	{
		GVK: ome("InferenceService"), ObjectKind: selectorv1.ObjectKind_OBJECT_KIND_INFERENCE_SERVICE, Namespaced: true,
		newMessage: func() protoMessage { return &omev1beta1.InferenceService{} },
		wrap: func(m protoMessage) *selectorv1.CacheObject {
			return &selectorv1.CacheObject{Object: &selectorv1.CacheObject_InferenceService{InferenceService: m.(*omev1beta1.InferenceService)}}
		},
	},
	{
		GVK:        schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "ControllerRevision"},
		ObjectKind: selectorv1.ObjectKind_OBJECT_KIND_CONTROLLER_REVISION, Namespaced: true,
		newMessage: func() protoMessage { return &omev1beta1.ControllerRevision{} },
		wrap: func(m protoMessage) *selectorv1.CacheObject {
			return &selectorv1.CacheObject{Object: &selectorv1.CacheObject_ControllerRevision{ControllerRevision: m.(*omev1beta1.ControllerRevision)}}
		},
	},
}

func ome(kind string) schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: "ome.io", Version: "v1beta1", Kind: kind}
}

// KindOf returns the synced kind with this ObjectKind.
func KindOf(k selectorv1.ObjectKind) (Kind, bool) {
	for _, kind := range Kinds {
		if kind.ObjectKind == k {
			return kind, true
		}
	}
	return Kind{}, false
}

// Key identifies one cached object: kind + namespace ("" for cluster-scoped kinds) + name, as
// the service does.
type Key struct {
	Kind      selectorv1.ObjectKind
	Namespace string
	Name      string
}

// String is `<Kind>/<namespace>/<name>` (`<Kind>/<name>` when cluster-scoped).
func (k Key) String() string {
	kind, ok := KindOf(k.Kind)
	name := k.Kind.String()
	if ok {
		name = kind.GVK.Kind
	}
	if k.Namespace == "" {
		return fmt.Sprintf("%s/%s", name, k.Name)
	}
	return fmt.Sprintf("%s/%s/%s", name, k.Namespace, k.Name)
}

// Proto is the key as the service's ObjectKey.
func (k Key) Proto() *selectorv1.ObjectKey {
	return &selectorv1.ObjectKey{Kind: k.Kind, Namespace: k.Namespace, Name: k.Name}
}
