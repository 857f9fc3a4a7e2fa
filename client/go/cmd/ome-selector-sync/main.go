// Command ome-selector-sync keeps an ome-selector service's cache equal to the cluster, for
// clusters whose OME controller is not modified: it runs as a second container beside the
// service and runs cachesync.Syncer in a controller-runtime manager of its own.
//
//	ome-selector-sync --selector-address unix:/run/ome-selector/api.sock
//	ome-selector-sync --selector-address 127.0.0.1:50051 --kubeconfig ~/.kube/config
//	ome-selector-sync --selector-address host:50051 --tls-ca ca.crt --tls-cert tls.crt --tls-key tls.key
//
// It reads the cluster with the in-cluster config, or --kubeconfig (or $KUBECONFIG), needing
// get/list/watch on ServingRuntimes, ClusterServingRuntimes, BaseModels, ClusterBaseModels,
// AcceleratorClasses and InferenceServices (ome.io) and ControllerRevisions (apps) — what
// deploy/standalone/rbac.yaml grants. /healthz answers once the manager runs; /readyz once the
// first full snapshot was accepted and while the service answers (--health-probe-bind-address,
// default :8091). Metrics, cachesync's ome_selector_sync_* among them, are on
// --metrics-bind-address (default :8092; "0" turns them off). The ports are ones OME's manager
// does not use (it has 8080 metrics, 8081 probes, 9443 webhook; the service's HTTP listener is 8090).
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/ome-selector/ome-selector/client/go/cachesync"
	"github.com/ome-selector/ome-selector/client/go/selectorclient"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func run() error {
	address := flag.String("selector-address", "unix:/run/ome-selector/api.sock", "the ome-selector service: unix:/path or host:port")
	probes := flag.String("health-probe-bind-address", ":8091", "address of /healthz and /readyz")
	metricsAddr := flag.String("metrics-bind-address", ":8092", `address of /metrics ("0" turns it off)`)
	revisionNS := flag.String("revision-namespace", "ome", `OME's namespace, where its runtime revisions are ("" for every namespace)`)
	caFile := flag.String("tls-ca", "", "PEM CA bundle that signed the service's certificate (TLS)")
	certFile := flag.String("tls-cert", "", "PEM client certificate (mTLS)")
	keyFile := flag.String("tls-key", "", "PEM key of --tls-cert")
	statusInterval := flag.Duration("status-interval", 10*time.Second, "how often GetCacheStatus checks the service still holds the cache sent")
	maxBatch := flag.Int("max-batch", 500, "objects per UpsertObjects or DeleteObjects call")
	zapOpts := zap.Options{}
	zapOpts.BindFlags(flag.CommandLine)
	// --kubeconfig is registered by controller-runtime's config package.
	flag.Parse()
	if flag.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %v", flag.Args())
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))

	cfg, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("kubernetes config: %w", err)
	}
	var opts []selectorclient.Option
	if *caFile != "" || *certFile != "" || *keyFile != "" {
		opts = append(opts, selectorclient.WithTLSFiles(*caFile, *certFile, *keyFile))
	}
	conn, err := selectorclient.New(*address, opts...)
	if err != nil {
		return fmt.Errorf("--selector-address %s: %w", *address, err)
	}
	defer conn.Close()

	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Metrics:                metricsserver.Options{BindAddress: *metricsAddr},
		HealthProbeBindAddress: *probes,
		Cache:                  CacheOptions(*revisionNS),
	})
	if err != nil {
		return fmt.Errorf("manager: %w", err)
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	if _, err := cachesync.Add(mgr, conn.Cache(), cachesync.Options{
		RevisionNamespace: *revisionNS,
		StatusInterval:    *statusInterval,
		MaxBatch:          *maxBatch,
	}); err != nil {
		return err
	}
	return mgr.Start(ctrl.SetupSignalHandler())
}

// CacheOptions limit the ControllerRevision informer to OME's runtime revisions (label
// ome.io/runtime-of) in revisionNamespace ("" for all), so StatefulSet and DaemonSet revisions
// are not held.
func CacheOptions(revisionNamespace string) cache.Options {
	req, err := labels.NewRequirement(cachesync.RuntimeOfLabel, selection.Exists, nil)
	if err != nil {
		panic(err)
	}
	by := cache.ByObject{Label: labels.NewSelector().Add(*req)}
	if revisionNamespace != "" {
		by.Namespaces = map[string]cache.Config{revisionNamespace: {}}
	}
	return cache.Options{ByObject: map[client.Object]cache.ByObject{&appsv1.ControllerRevision{}: by}}
}
