package selectorclient

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
)

// TLSConfigFromFiles is the tls.Config of WithTLSFiles: RootCAs from the PEM bundle caFile and,
// when certFile or keyFile is set, the client certificate of that PEM pair (mTLS); TLS 1.2 at least.
func TLSConfigFromFiles(caFile, certFile, keyFile string) (*tls.Config, error) {
	ca, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("selectorclient: CA bundle: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, fmt.Errorf("selectorclient: CA bundle %s: no PEM certificates", caFile)
	}
	c := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	if certFile != "" || keyFile != "" {
		pair, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("selectorclient: client certificate: %w", err)
		}
		c.Certificates = []tls.Certificate{pair}
	}
	return c, nil
}
