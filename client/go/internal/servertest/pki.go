package servertest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// PKI is a test CA, a server certificate for 127.0.0.1 / localhost and a client certificate,
// as PEM files in a temp dir.
type PKI struct {
	CA, ServerCert, ServerKey, ClientCert, ClientKey string
}

// NewPKI writes a fresh PKI into t.TempDir().
func NewPKI(t testing.TB) *PKI {
	t.Helper()
	dir := t.TempDir()
	caKey := newKey(t)
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ome-selector test CA"},
		NotBefore: time.Now().Add(-5 * time.Minute), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	p := &PKI{CA: writePEM(t, dir, "ca.pem", "CERTIFICATE", caDER)}
	leaf := func(name string, serial int64, usage x509.ExtKeyUsage) (string, string) {
		key := newKey(t)
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name},
			NotBefore: time.Now().Add(-5 * time.Minute), NotAfter: time.Now().Add(24 * time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
		}
		if usage == x509.ExtKeyUsageServerAuth {
			tmpl.DNSNames = []string{"localhost"}
			tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1")}
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		keyDER, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			t.Fatal(err)
		}
		return writePEM(t, dir, name+".pem", "CERTIFICATE", der), writePEM(t, dir, name+"-key.pem", "PRIVATE KEY", keyDER)
	}
	p.ServerCert, p.ServerKey = leaf("server", 2, x509.ExtKeyUsageServerAuth)
	p.ClientCert, p.ClientKey = leaf("client", 3, x509.ExtKeyUsageClientAuth)
	return p
}

// ServerArgs are the serve flags for TLS with this PKI, mTLS when clientCA is true.
func (p *PKI) ServerArgs(clientCA bool) []string {
	args := []string{"--tls-cert", p.ServerCert, "--tls-key", p.ServerKey}
	if clientCA {
		args = append(args, "--tls-client-ca", p.CA)
	}
	return args
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func writePEM(t testing.TB, dir, name, kind string, der []byte) string {
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
