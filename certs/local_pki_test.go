package certs

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

func TestLocalPKIIsMadeOnceAndReused(t *testing.T) {
	g := NewWithT(t)
	dir := filepath.Join(t.TempDir(), "webhook-certs")
	now := time.Now()

	first, reason, err := loadOrCreateLocalPKI(dir, now)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(reason).NotTo(BeEmpty(), "first run: reused files that did not exist")
	second, reason, err := loadOrCreateLocalPKI(dir, now.Add(time.Hour))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(reason).To(BeEmpty(), "second run made new certificates")
	if !bytes.Equal(first.caPEM, second.caPEM) || !bytes.Equal(first.certPEM, second.certPEM) || !bytes.Equal(first.keyPEM, second.keyPEM) {
		t.Fatal("second run returned other certificates")
	}
	for name, mode := range map[string]os.FileMode{dir: 0o700, filepath.Join(dir, KeyFile): 0o600} {
		fi, err := os.Stat(name)
		g.Expect(err).NotTo(HaveOccurred())
		if fi.Mode().Perm() != mode {
			t.Errorf("%s: mode %v, want %v", name, fi.Mode().Perm(), mode)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "ca.key")); !os.IsNotExist(err) {
		t.Errorf("the CA's key is kept on disk (%v); it should be thrown away after signing", err)
	}
}

func TestLocalPKICertificate(t *testing.T) {
	g := NewWithT(t)
	pki, err := newLocalPKI(time.Now())
	g.Expect(err).NotTo(HaveOccurred())
	ca, err := parseCertificatePEM(pki.caPEM)
	g.Expect(err).NotTo(HaveOccurred())
	leaf, err := parseCertificatePEM(pki.certPEM)
	g.Expect(err).NotTo(HaveOccurred())
	if !ca.IsCA || leaf.IsCA {
		t.Fatalf("IsCA: CA %v, serving certificate %v", ca.IsCA, leaf.IsCA)
	}
	if len(leaf.IPAddresses) != 1 || !leaf.IPAddresses[0].Equal(net.ParseIP("127.0.0.1")) {
		t.Errorf("IP SANs %v, want [127.0.0.1]", leaf.IPAddresses)
	}
	if len(leaf.DNSNames) != 1 || leaf.DNSNames[0] != "localhost" {
		t.Errorf("DNS SANs %v, want [localhost]", leaf.DNSNames)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	for _, name := range []string{"127.0.0.1", "localhost"} {
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: name, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
			t.Errorf("does not verify against the CA for %s: %v", name, err)
		}
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: "example.com"}); err == nil {
		t.Error("verifies for example.com")
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: x509.NewCertPool(), DNSName: "localhost"}); err == nil {
		t.Error("verifies without the CA")
	}
}

// A local cluster's controller manager signs with the CA's key: it must be
// the key of the CA's certificate.
func TestCAKeyPEMIsTheCertificatesKey(t *testing.T) {
	g := NewWithT(t)
	ca, err := NewCA("test CA", time.Now(), time.Now().Add(time.Hour))
	g.Expect(err).NotTo(HaveOccurred())
	keyPEM, err := ca.KeyPEM()
	g.Expect(err).NotTo(HaveOccurred())
	if _, err := tls.X509KeyPair(ca.CertPEM, keyPEM); err != nil {
		t.Errorf("the CA's certificate and KeyPEM do not pair: %v", err)
	}
}

// A kept CA and certificate are replaced, both together, whenever they could
// not serve: files missing or damaged, a certificate from another CA, or
// close to expiry.
func TestLocalPKIIsMadeAgainWhenUnusable(t *testing.T) {
	other, err := newLocalPKI(time.Now())
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	tests := []struct {
		name string
		// damage, if set, changes the kept files.
		damage func(t *testing.T, dir string)
		later  time.Duration
		remade bool
	}{
		{name: "intact", remade: false},
		{name: "intact, a day later", later: 24 * time.Hour, remade: false},
		{name: "key missing", damage: remove(KeyFile), remade: true},
		{name: "CA missing", damage: remove(CAFile), remade: true},
		{name: "certificate damaged", damage: overwrite(CertFile, []byte("not PEM")), remade: true},
		{name: "key of another certificate", damage: overwrite(KeyFile, other.keyPEM), remade: true},
		{name: "another CA", damage: overwrite(CAFile, other.caPEM), remade: true},
		{name: "CA file holds the serving certificate", damage: overwrite(CAFile, other.certPEM), remade: true},
		{name: "certificate expires within the renewal window", later: localCertValidity - localRenewBefore + time.Hour, remade: true},
		{name: "certificate expired", later: 2 * localCertValidity, remade: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			dir := t.TempDir()
			now := time.Now()
			before, _, err := loadOrCreateLocalPKI(dir, now)
			g.Expect(err).NotTo(HaveOccurred())
			if tt.damage != nil {
				tt.damage(t, dir)
			}
			after, reason, err := loadOrCreateLocalPKI(dir, now.Add(tt.later))
			g.Expect(err).NotTo(HaveOccurred())
			if remade := reason != ""; remade != tt.remade {
				t.Fatalf("remade = %v (%q), want %v", remade, reason, tt.remade)
			}
			if !tt.remade {
				return
			}
			if bytes.Equal(before.caPEM, after.caPEM) || bytes.Equal(before.certPEM, after.certPEM) {
				t.Error("kept part of the old CA and certificate")
			}
			if _, err := loadLocalPKI(dir, os.Geteuid(), now.Add(tt.later)); err != nil {
				t.Errorf("the new files do not load: %v", err)
			}
		})
	}
}

func remove(name string) func(*testing.T, string) {
	return func(t *testing.T, dir string) {
		NewWithT(t).Expect(os.Remove(filepath.Join(dir, name))).To(Succeed())
	}
}

func overwrite(name string, data []byte) func(*testing.T, string) {
	return func(t *testing.T, dir string) {
		NewWithT(t).Expect(os.WriteFile(filepath.Join(dir, name), data, 0o600)).To(Succeed())
	}
}

// What others could do to the directory before a run: none of it may leave
// the key readable to them, write it where they choose, or have the run
// trust a CA or key they planted.
func TestLocalPKIFilesStayPrivate(t *testing.T) {
	planted, err := newLocalPKI(time.Now())
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	// link plants a symbolic link at dir/name to victim, a file others can
	// read.
	link := func(name string) func(t *testing.T, dir, victim string) {
		return func(t *testing.T, dir, victim string) {
			NewWithT(t).Expect(os.Symlink(victim, filepath.Join(dir, name))).To(Succeed())
		}
	}
	// plant writes a whole CA, certificate and key into dir, as another
	// user could if the files were open to them.
	plant := func(mode os.FileMode) func(t *testing.T, dir, victim string) {
		return func(t *testing.T, dir, _ string) {
			g := NewWithT(t)
			for name, data := range map[string][]byte{CAFile: planted.caPEM, CertFile: planted.certPEM, KeyFile: planted.keyPEM} {
				g.Expect(os.WriteFile(filepath.Join(dir, name), data, mode)).To(Succeed())
				g.Expect(os.Chmod(filepath.Join(dir, name), mode)).To(Succeed())
			}
		}
	}
	// linkPlanted plants links to a CA, certificate and key kept private
	// elsewhere.
	linkPlanted := func(t *testing.T, dir, _ string) {
		elsewhere := t.TempDir()
		plant(0o600)(t, elsewhere, "")
		for _, name := range []string{CAFile, CertFile, KeyFile} {
			link(name)(t, dir, filepath.Join(elsewhere, name))
		}
	}
	tests := []struct {
		name    string
		dirMode os.FileMode
		setup   func(t *testing.T, dir, victim string)
		// wantErr: the run refuses the directory, with an error that
		// names it and says this.
		wantErr string
	}{
		{name: "pre-existing 0777 directory", dirMode: 0o777, wantErr: "can be written by group or others (mode 0777)"},
		{name: "group-writable directory", dirMode: 0o770, wantErr: "can be written by group or others (mode 0770)"},
		{name: "world-writable directory with a kept CA", dirMode: 0o777, setup: plant(0o600), wantErr: "can be written by group or others"},
		{name: "pre-existing 0755 directory", dirMode: 0o755},
		{name: "symbolic link at tls.key", dirMode: 0o700, setup: link(KeyFile)},
		{name: "symbolic link at tls.key.tmp", dirMode: 0o700, setup: link(KeyFile + ".tmp")},
		{name: "symbolic link at ca.crt", dirMode: 0o700, setup: link(CAFile)},
		{name: "symbolic links to a private CA, certificate and key", dirMode: 0o700, setup: linkPlanted},
		{name: "planted CA, certificate and key open to others", dirMode: 0o700, setup: plant(0o644)},
		{name: "planted CA, certificate and key others can write", dirMode: 0o700, setup: plant(0o622)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			victim := filepath.Join(t.TempDir(), "readable-by-all")
			g.Expect(os.WriteFile(victim, []byte("victim"), 0o644)).To(Succeed())
			dir := filepath.Join(t.TempDir(), "webhook-certs")
			g.Expect(os.Mkdir(dir, 0o700)).To(Succeed())
			if tt.setup != nil {
				tt.setup(t, dir, victim)
			}
			// After setup, and past the umask.
			g.Expect(os.Chmod(dir, tt.dirMode)).To(Succeed())

			pki, reason, err := loadOrCreateLocalPKI(dir, time.Now())
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one naming %s and saying %q", err, dir, tt.wantErr)
				}
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			if reason == "" {
				t.Error("reused what it found")
			}
			if bytes.Equal(pki.caPEM, planted.caPEM) || bytes.Equal(pki.keyPEM, planted.keyPEM) {
				t.Error("serves with the planted CA or key")
			}
			if b, err := os.ReadFile(victim); err != nil || string(b) != "victim" {
				t.Errorf("wrote through the link: the victim file holds %q (%v)", b, err)
			}
			for _, name := range []string{CAFile, CertFile, KeyFile} {
				fi, err := os.Lstat(filepath.Join(dir, name))
				g.Expect(err).NotTo(HaveOccurred())
				if !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
					t.Errorf("%s: mode %v, want a regular file of mode 0600", name, fi.Mode())
				}
			}
			if _, reason, err := loadOrCreateLocalPKI(dir, time.Now()); err != nil || reason != "" {
				t.Errorf("the next run does not reuse the new files: %q, %v", reason, err)
			}
		})
	}
}
