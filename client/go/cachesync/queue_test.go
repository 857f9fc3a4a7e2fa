package cachesync

import (
	"reflect"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	selectorv1 "github.com/ome-selector/ome-selector/client/go/ome/selector/v1"
)

func rt(name string) Key {
	return Key{Kind: selectorv1.ObjectKind_OBJECT_KIND_CLUSTER_SERVING_RUNTIME, Name: name}
}

func obj(rv string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetResourceVersion(rv)
	return u
}

func rvOf(op Op) string {
	if op.Object == nil {
		return "deleted"
	}
	return op.Object.GetResourceVersion()
}

func summary(ops []Op) []string {
	out := []string{}
	for _, op := range ops {
		out = append(out, op.Key.Name+"@"+rvOf(op))
	}
	return out
}

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func TestQueueCoalescesPerKeyKeepingPositionAndOldestSince(t *testing.T) {
	q := NewQueue(10)
	q.Add(rt("a"), obj("1"), t0)
	q.Add(rt("b"), obj("2"), t0.Add(time.Second))
	q.Add(rt("a"), obj("3"), t0.Add(2*time.Second))
	q.Add(rt("a"), nil, t0.Add(3*time.Second))
	if q.Len() != 2 {
		t.Fatalf("Len = %d, want 2", q.Len())
	}
	ops := q.Take(10)
	if got, want := summary(ops), []string{"a@deleted", "b@2"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("Take = %v, want %v", got, want)
	}
	if !ops[0].Since.Equal(t0) {
		t.Fatalf("Since of a = %v, want the first change's %v", ops[0].Since, t0)
	}
	if q.Len() != 0 {
		t.Fatalf("Len after Take = %d, want 0", q.Len())
	}
}

func TestQueueBatchesInFirstQueuedOrder(t *testing.T) {
	q := NewQueue(100)
	for _, name := range []string{"a", "b", "c", "d", "e"} {
		q.Add(rt(name), obj(name), t0)
	}
	if got, want := summary(q.Take(2)), []string{"a@a", "b@b"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("first batch = %v, want %v", got, want)
	}
	select {
	case <-q.Ready():
	default:
		t.Fatal("Ready not signalled while 3 changes remain")
	}
	if got, want := summary(q.Take(2)), []string{"c@c", "d@d"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("second batch = %v, want %v", got, want)
	}
	if got, want := summary(q.Take(2)), []string{"e@e"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("third batch = %v, want %v", got, want)
	}
	if got := q.Take(2); len(got) != 0 {
		t.Fatalf("empty queue gave %v", summary(got))
	}
}

func TestQueueRequeuePutsFailedBatchFirstAndKeepsNewerState(t *testing.T) {
	q := NewQueue(100)
	q.Add(rt("a"), obj("1"), t0)
	q.Add(rt("b"), obj("2"), t0.Add(time.Second))
	failed := q.Take(2)
	q.Add(rt("c"), obj("3"), t0.Add(2*time.Second))
	q.Add(rt("b"), obj("4"), t0.Add(3*time.Second)) // b changed again while its write failed
	q.Requeue(failed)
	ops := q.Take(10)
	if got, want := summary(ops), []string{"a@1", "c@3", "b@4"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("after Requeue = %v, want %v", got, want)
	}
	if !ops[2].Since.Equal(t0.Add(time.Second)) {
		t.Fatalf("Since of b = %v, want the failed change's %v", ops[2].Since, t0.Add(time.Second))
	}
}

func TestQueueOverflowEmptiesAndAsksForSnapshot(t *testing.T) {
	q := NewQueue(2)
	q.Add(rt("a"), obj("1"), t0)
	q.Add(rt("b"), obj("2"), t0)
	q.Add(rt("a"), obj("3"), t0) // coalesced: no new key
	if q.Overflowed() {
		t.Fatal("overflowed at 2 keys with limit 2")
	}
	q.Add(rt("c"), obj("4"), t0)
	if !q.Overflowed() || q.Len() != 0 {
		t.Fatalf("after a third key: Overflowed=%v Len=%d, want true 0", q.Overflowed(), q.Len())
	}
	q.Add(rt("d"), obj("5"), t0) // dropped: the snapshot reads it
	q.Requeue([]Op{{Key: rt("e"), Object: obj("6")}})
	if q.Len() != 0 {
		t.Fatalf("Len while overflowed = %d, want 0", q.Len())
	}
	q.Reset()
	if q.Overflowed() {
		t.Fatal("still overflowed after Reset")
	}
	q.Add(rt("f"), obj("7"), t0)
	if got, want := summary(q.Take(10)), []string{"f@7"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("after Reset = %v, want %v", got, want)
	}
}

func TestQueueKeysDifferByKindAndNamespace(t *testing.T) {
	q := NewQueue(10)
	sr := Key{Kind: selectorv1.ObjectKind_OBJECT_KIND_SERVING_RUNTIME, Namespace: "team-a", Name: "x"}
	srB := Key{Kind: selectorv1.ObjectKind_OBJECT_KIND_SERVING_RUNTIME, Namespace: "team-b", Name: "x"}
	q.Add(rt("x"), obj("1"), t0)
	q.Add(sr, obj("2"), t0)
	q.Add(srB, obj("3"), t0)
	if q.Len() != 3 {
		t.Fatalf("Len = %d, want 3 distinct keys", q.Len())
	}
	if got, want := sr.String(), "ServingRuntime/team-a/x"; got != want {
		t.Fatalf("String = %q, want %q", got, want)
	}
	if got, want := rt("x").String(), "ClusterServingRuntime/x"; got != want {
		t.Fatalf("String = %q, want %q", got, want)
	}
}
