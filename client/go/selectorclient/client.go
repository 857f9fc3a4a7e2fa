// Package selectorclient connects to ome-selector: the SelectionService and CacheService of
// ome.selector.v1 and the standard gRPC health service, on one grpc.ClientConn.
//
//	c, err := selectorclient.New("unix:/run/ome-selector/api.sock")
//	if err != nil { ... }
//	defer c.Close()
//	resp, err := c.Selection().SelectRuntime(ctx, &selectorv1.SelectRuntimeRequest{...})
//
// The connection is the Python client's (client/python/ome_selector_client/client.py): the same
// gRPC service config (retry on UNAVAILABLE only, 3 retries from 100 ms, doubling, at most
// 30 s, gRPC's jitter), 64 MiB messages each way, and keepalive pings the server accepts
// (README, "gRPC limits and keepalive"). Every call gets a deadline when its context has none
// (DefaultTimeout, or the method's entry in MethodTimeouts, or WithTimeout / CallTimeout).
// Failed calls return *Error, which carries the status code, message and the
// google.rpc.BadRequest field violations.
package selectorclient

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/status"

	selectorv1 "github.com/ome-selector/ome-selector/client/go/ome/selector/v1"
)

// SelectionServiceName is the health service name that turns SERVING once the cache is loaded.
const SelectionServiceName = "ome.selector.v1.SelectionService"

// MaxMessageBytes is the limit of the answers, the server's (64 MiB).
const MaxMessageBytes = 64 * 1024 * 1024

// MaxWriteBytes is the limit of the requests the client sends: the server takes up to 256 MiB
// on the listener of CacheService (an ApplySnapshot of 50,000 runtimes is about 77 MiB) and
// 64 MiB on a listener without it.
const MaxWriteBytes = 256 * 1024 * 1024

// MaxRetries is gRPC's cap: at most 5 attempts, the first included.
const MaxRetries = 4

// DefaultTimeout is the deadline of a unary call whose context has none and whose method is
// not in MethodTimeouts.
const DefaultTimeout = 10 * time.Second

// MethodTimeouts are the default deadlines of the calls whose answers grow with the cache (full
// method names). WatchSelections, a stream that lasts until cancelled, gets none.
var MethodTimeouts = map[string]time.Duration{
	selectorv1.CacheService_ApplySnapshot_FullMethodName:           60 * time.Second,
	selectorv1.CacheService_UpsertObjects_FullMethodName:           30 * time.Second,
	selectorv1.CacheService_DeleteObjects_FullMethodName:           30 * time.Second,
	selectorv1.SelectionService_ExplainRuntimes_FullMethodName:     60 * time.Second,
	selectorv1.SelectionService_PreviewCacheChange_FullMethodName:  60 * time.Second,
	selectorv1.SelectionService_GetRuntimeTree_FullMethodName:      60 * time.Second,
	selectorv1.SelectionService_WatchSelections_FullMethodName:     0,
	selectorv1.SelectionService_GetRuntimeHistory_FullMethodName:   30 * time.Second,
	selectorv1.SelectionService_GetEffectiveRuntime_FullMethodName: 30 * time.Second,
}

// Keepalive is the default: a ping after 30 s without activity, also with no call in flight,
// and the connection dropped when the ping is not answered within 20 s. The server accepts
// pings down to every 500 ms (grpc-go raises a Time under 10 s to 10 s).
var Keepalive = keepalive.ClientParameters{Time: 30 * time.Second, Timeout: 20 * time.Second, PermitWithoutStream: true}

// services are the services the retry policy covers.
var services = []string{SelectionServiceName, "ome.selector.v1.CacheService", "grpc.health.v1.Health"}

// ServiceConfig is the JSON gRPC service config of the Python client's service_config(retries,
// backoff): every method of the three services retried on UNAVAILABLE only, retries (0..4)
// times, the n-th after a random delay of up to backoff*2^(n-1) (10 ms at least, 30 s at most).
// With 0 retries, no retry policy. An error for retries outside 0..4 or a backoff <= 0.
func ServiceConfig(retries int, backoff time.Duration) (string, error) {
	if retries < 0 || retries > MaxRetries {
		return "", fmt.Errorf("selectorclient: retries must be 0 to %d (gRPC allows at most 5 attempts), not %d", MaxRetries, retries)
	}
	if backoff <= 0 {
		return "", fmt.Errorf("selectorclient: backoff must be more than 0, not %s", backoff)
	}
	names := make([]map[string]string, len(services))
	for i, s := range services {
		names[i] = map[string]string{"service": s}
	}
	method := map[string]any{"name": names}
	if retries > 0 {
		backoff = max(backoff, 10*time.Millisecond)
		method["retryPolicy"] = map[string]any{
			"maxAttempts":          retries + 1,
			"initialBackoff":       fmt.Sprintf("%.3fs", backoff.Seconds()),
			"maxBackoff":           "30s",
			"backoffMultiplier":    2,
			"retryableStatusCodes": []string{"UNAVAILABLE"},
		}
	}
	out, err := json.Marshal(map[string]any{"methodConfig": []any{method}})
	return string(out), err
}

// Option configures New.
type Option func(*config) error

type config struct {
	creds       credentials.TransportCredentials
	retries     int
	backoff     time.Duration
	timeout     time.Duration
	keepalive   keepalive.ClientParameters
	dialOptions []grpc.DialOption
}

// WithTLSConfig uses TLS with this configuration (set Certificates for mTLS).
func WithTLSConfig(c *tls.Config) Option {
	return func(cfg *config) error {
		if c == nil {
			return errors.New("selectorclient: WithTLSConfig(nil)")
		}
		cfg.creds = credentials.NewTLS(c)
		return nil
	}
}

// WithTLSFiles uses TLS, verifying the server with the PEM CA bundle caFile; with certFile and
// keyFile (PEM) it presents that client certificate (mTLS). Empty certFile and keyFile: TLS only.
func WithTLSFiles(caFile, certFile, keyFile string) Option {
	return func(cfg *config) error {
		c, err := TLSConfigFromFiles(caFile, certFile, keyFile)
		if err != nil {
			return err
		}
		cfg.creds = credentials.NewTLS(c)
		return nil
	}
}

// WithRetries sets how many times (0..4) gRPC repeats a call that failed with UNAVAILABLE and
// the initial backoff (default 3 and 100 ms, as the Python client).
func WithRetries(retries int, backoff time.Duration) Option {
	return func(cfg *config) error {
		cfg.retries, cfg.backoff = retries, backoff
		return nil
	}
}

// WithTimeout replaces DefaultTimeout and MethodTimeouts: every call whose context has no
// deadline gets d (WatchSelections too; 0 gives calls no deadline).
func WithTimeout(d time.Duration) Option {
	return func(cfg *config) error {
		if d < 0 {
			return fmt.Errorf("selectorclient: timeout must not be negative, not %s", d)
		}
		cfg.timeout = d
		return nil
	}
}

// WithKeepalive replaces Keepalive.
func WithKeepalive(p keepalive.ClientParameters) Option {
	return func(cfg *config) error {
		cfg.keepalive = p
		return nil
	}
}

// WithDialOptions adds grpc.DialOptions after the client's own (a later option wins).
func WithDialOptions(opts ...grpc.DialOption) Option {
	return func(cfg *config) error {
		cfg.dialOptions = append(cfg.dialOptions, opts...)
		return nil
	}
}

// CallTimeout is a grpc.CallOption giving one call the deadline d when its context has none.
func CallTimeout(d time.Duration) grpc.CallOption { return callTimeout{d: d} }

type callTimeout struct {
	grpc.EmptyCallOption
	d time.Duration
}

// Client is a connection to ome-selector. It is safe for concurrent use.
type Client struct {
	conn      *grpc.ClientConn
	selection selectorv1.SelectionServiceClient
	cache     selectorv1.CacheServiceClient
	health    healthpb.HealthClient
	timeout   time.Duration // < 0: per method
}

// New connects to target: `host:port` (grpc.NewClient's default dns resolver), `unix:/path` or
// `unix:///path` (a unix socket), or any other target grpc.NewClient accepts. It does not wait for the server: the first
// call connects. Plaintext unless a TLS option is given.
func New(target string, opts ...Option) (*Client, error) {
	cfg := config{retries: 3, backoff: 100 * time.Millisecond, timeout: -1, keepalive: Keepalive, creds: insecure.NewCredentials()}
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	sc, err := ServiceConfig(cfg.retries, cfg.backoff)
	if err != nil {
		return nil, err
	}
	c := &Client{timeout: cfg.timeout}
	dial := []grpc.DialOption{
		grpc.WithTransportCredentials(cfg.creds),
		grpc.WithDefaultServiceConfig(sc),
		grpc.WithKeepaliveParams(cfg.keepalive),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(MaxMessageBytes), grpc.MaxCallSendMsgSize(MaxWriteBytes)),
		grpc.WithChainUnaryInterceptor(c.unary),
		grpc.WithChainStreamInterceptor(c.stream),
	}
	conn, err := grpc.NewClient(target, append(dial, cfg.dialOptions...)...)
	if err != nil {
		return nil, fmt.Errorf("selectorclient: %w", err)
	}
	c.conn = conn
	c.selection = selectorv1.NewSelectionServiceClient(conn)
	c.cache = selectorv1.NewCacheServiceClient(conn)
	c.health = healthpb.NewHealthClient(conn)
	return c, nil
}

// Selection is the generated SelectionService client (errors are *Error).
func (c *Client) Selection() selectorv1.SelectionServiceClient { return c.selection }

// Cache is the generated CacheService client (errors are *Error).
func (c *Client) Cache() selectorv1.CacheServiceClient { return c.cache }

// Health is the standard health client (errors are *Error).
func (c *Client) Health() healthpb.HealthClient { return c.health }

// Conn is the underlying connection.
func (c *Client) Conn() *grpc.ClientConn { return c.conn }

// Close closes the connection.
func (c *Client) Close() error { return c.conn.Close() }

// WaitUntilServing polls the health service (waiting for the connection) until service (""
// for the server as a whole, SelectionServiceName for the cache) is SERVING, or ctx ends: then
// the error says `<service> did not become SERVING (last: <status or error>)`.
func (c *Client) WaitUntilServing(ctx context.Context, service string) error {
	last := "no answer"
	for {
		resp, err := c.health.Check(ctx, &healthpb.HealthCheckRequest{Service: service}, grpc.WaitForReady(true))
		switch {
		case err == nil && resp.GetStatus() == healthpb.HealthCheckResponse_SERVING:
			return nil
		case err == nil:
			last = resp.GetStatus().String()
		case ctx.Err() == nil && !pastDeadline(ctx): // a call cut by ctx's own end keeps the last answer
			last = status.Convert(err).Message()
		}
		select {
		case <-ctx.Done():
			name := service
			if name == "" {
				name = "the server"
			}
			return fmt.Errorf("%s did not become SERVING (last: %s): %w", name, last, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// pastDeadline says whether ctx's deadline has passed. gRPC's timer for a call's deadline can
// end the call just before ctx's own timer sets ctx.Err().
func pastDeadline(ctx context.Context) bool {
	d, ok := ctx.Deadline()
	return ok && !time.Now().Before(d)
}

// deadline is the timeout of a call to method: a CallTimeout, else the client's.
func (c *Client) deadline(method string, opts []grpc.CallOption) time.Duration {
	for _, o := range opts {
		if t, ok := o.(callTimeout); ok {
			return t.d
		}
	}
	if c.timeout >= 0 {
		return c.timeout
	}
	if d, ok := MethodTimeouts[method]; ok {
		return d
	}
	return DefaultTimeout
}

func (c *Client) withDeadline(ctx context.Context, method string, opts []grpc.CallOption) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	if d := c.deadline(method, opts); d > 0 {
		return context.WithTimeout(ctx, d)
	}
	return ctx, func() {}
}

func (c *Client) unary(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	ctx, cancel := c.withDeadline(ctx, method, opts)
	defer cancel()
	return asError(invoker(ctx, method, req, reply, cc, opts...))
}

func (c *Client) stream(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	ctx, cancel := c.withDeadline(ctx, method, opts)
	s, err := streamer(ctx, desc, cc, method, opts...)
	if err != nil {
		cancel()
		return nil, asError(err)
	}
	return &clientStream{ClientStream: s, cancel: cancel}, nil
}

// clientStream turns the stream's errors into *Error and releases its deadline when it ends.
type clientStream struct {
	grpc.ClientStream
	cancel context.CancelFunc
}

func (s *clientStream) RecvMsg(m any) error {
	err := s.ClientStream.RecvMsg(m)
	if err != nil {
		s.cancel()
		if err == io.EOF {
			return err
		}
	}
	return asError(err)
}

func (s *clientStream) SendMsg(m any) error {
	err := s.ClientStream.SendMsg(m)
	if err == io.EOF { // the status comes from RecvMsg
		return err
	}
	return asError(err)
}

// FieldViolation is one google.rpc.BadRequest field violation: the request field (e.g.
// `inference_service.metadata.namespace`) and what is wrong with it.
type FieldViolation struct {
	Field       string
	Description string
}

// Error is a failed call: the gRPC status code and message, and the field violations of a
// google.rpc.BadRequest detail (INVALID_ARGUMENT). status.FromError and status.Code work on it.
type Error struct {
	Code            codes.Code
	Message         string
	FieldViolations []FieldViolation
	status          *status.Status
}

// Error is `<Code>: <message>`, e.g. `InvalidArgument: inference_service.metadata.namespace: is required`.
func (e *Error) Error() string {
	if e.Message == "" {
		return e.Code.String()
	}
	return e.Code.String() + ": " + e.Message
}

// GRPCStatus is the status the server sent (with its details).
func (e *Error) GRPCStatus() *status.Status { return e.status }

// asError converts a gRPC error to *Error (nil stays nil; an *Error is returned as it is).
func asError(err error) error {
	if err == nil {
		return nil
	}
	var done *Error
	if errors.As(err, &done) {
		return err
	}
	st := status.Convert(err)
	e := &Error{Code: st.Code(), Message: st.Message(), status: st}
	for _, d := range st.Details() {
		if br, ok := d.(*errdetails.BadRequest); ok {
			for _, v := range br.GetFieldViolations() {
				e.FieldViolations = append(e.FieldViolations, FieldViolation{Field: v.GetField(), Description: v.GetDescription()})
			}
		}
	}
	return e
}
