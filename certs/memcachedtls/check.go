package memcachedtls

import (
	"crypto"
	"crypto/sha256"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The keys of the Secret, and so the files of its volume.
const (
	CertFile = "tls.crt"
	KeyFile  = "tls.key"
	CAFile   = "ca.crt"
)

// Secret is a TLS Secret as a memcached pod mounts it.
type Secret struct {
	// Dir is where the Secret volume is mounted.
	Dir string
	// Name is the Secret's name, for the messages an admin reads.
	Name string
	// ClientCA says that memcached verifies client certificates, so that
	// ca.crt is required.
	ClientCA bool
}

// Reason is what is wrong with a Secret, for code that tells problems apart.
type Reason string

const (
	// ReasonNotFound: the volume holds no key at all. Kubelet mounts an
	// optional Secret that does not exist as an empty directory.
	ReasonNotFound Reason = "NotFound"
	// ReasonMissing: a key the pod needs is not in the Secret.
	ReasonMissing Reason = "Missing"
	// ReasonUnreadable: the file is there but cannot be read (its mode).
	ReasonUnreadable Reason = "Unreadable"
	// ReasonNoPEM: the file holds no PEM block of the kind it should.
	ReasonNoPEM Reason = "NoPEM"
	// ReasonMalformed: a PEM block of the right kind does not parse.
	ReasonMalformed Reason = "Malformed"
	// ReasonKeyMismatch: tls.key is not the key of tls.crt's certificate.
	ReasonKeyMismatch Reason = "KeyMismatch"
	// ReasonExpired: the certificate's NotAfter has passed.
	ReasonExpired Reason = "Expired"
	// ReasonNotYetValid: the certificate's NotBefore is still to come.
	ReasonNotYetValid Reason = "NotYetValid"
)

// Problem is why a Secret cannot be given to memcached. Its message is one
// sentence naming the Secret, the key and what an admin has to fix; the
// operator copies it into the Memcached's status as it is.
type Problem struct {
	Secret string
	Reason Reason
	// File is the key at fault; empty for ReasonNotFound.
	File string
	// At is the NotAfter of an expired certificate, the NotBefore of one
	// not yet valid.
	At time.Time
	// Err is what the reader or parser said, for ReasonUnreadable and
	// ReasonMalformed.
	Err error
}

func (p *Problem) Error() string {
	var what string
	switch p.Reason {
	case ReasonNotFound:
		return fmt.Sprintf("Secret %q does not exist or holds no keys: it needs %s and %s", p.Secret, CertFile, KeyFile)
	case ReasonMissing:
		what = p.File + " is missing"
	case ReasonUnreadable:
		what = fmt.Sprintf("%s cannot be read: %v", p.File, p.Err)
	case ReasonNoPEM:
		what = fmt.Sprintf("%s holds no PEM %s", p.File, p.content())
	case ReasonMalformed:
		what = fmt.Sprintf("the %s in %s cannot be parsed: %v", p.content(), p.File, p.Err)
	case ReasonKeyMismatch:
		what = fmt.Sprintf("%s does not match the certificate in %s", KeyFile, CertFile)
	case ReasonExpired:
		what = fmt.Sprintf("the certificate in %s expired at %s", p.File, p.At.UTC().Format(time.RFC3339))
	case ReasonNotYetValid:
		what = fmt.Sprintf("the certificate in %s is not valid until %s", p.File, p.At.UTC().Format(time.RFC3339))
	default:
		what = fmt.Sprintf("%s: %s", p.File, p.Reason)
	}
	return fmt.Sprintf("Secret %q: %s", p.Secret, what)
}

// content is what File should hold.
func (p *Problem) content() string {
	if p.File == KeyFile {
		return "private key"
	}
	return "certificate"
}

// Check reads the Secret's files and returns the certificate memcached
// would serve from them, or a *Problem saying why memcached must not be
// given them. now is the time validity is judged at.
func (s Secret) Check(now time.Time) (*x509.Certificate, error) {
	return s.read().check(now)
}

// files is one consistent reading of the Secret volume.
type files struct {
	secret Secret
	// content and readErr by key; a key absent from both is missing.
	content map[string][]byte
	readErr map[string]error
	// empty: the directory holds no key at all.
	empty bool
}

// dataLink is the symlink kubelet swaps to update a Secret volume at once.
const dataLink = "..data"

// read reads the Secret's files. Kubelet updates a Secret volume by
// pointing ..data at a new directory; a reading that spans a swap could
// pair an old certificate with a new key, so it is repeated until ..data
// is the same before and after it. A plain directory has no ..data and is
// read once.
func (s Secret) read() files {
	var f files
	for range 5 {
		before, _ := os.Readlink(filepath.Join(s.Dir, dataLink))
		f = s.readOnce()
		if after, _ := os.Readlink(filepath.Join(s.Dir, dataLink)); after == before {
			break
		}
	}
	return f
}

func (s Secret) readOnce() files {
	f := files{secret: s, content: map[string][]byte{}, readErr: map[string]error{}}
	for _, name := range []string{CertFile, KeyFile, CAFile} {
		data, err := os.ReadFile(filepath.Join(s.Dir, name))
		switch {
		case err == nil:
			f.content[name] = data
		case !errors.Is(err, fs.ErrNotExist):
			// The path is the pod's business, the errno the admin's.
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			f.readErr[name] = err
		}
	}
	entries, _ := os.ReadDir(s.Dir)
	f.empty = true
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "..") {
			f.empty = false
			break
		}
	}
	return f
}

// hash identifies the content memcached would load, so that a change is
// noticed whatever kubelet does to timestamps and links.
func (f files) hash() [sha256.Size]byte {
	h := sha256.New()
	for _, name := range []string{CertFile, KeyFile, CAFile} {
		data, ok := f.content[name]
		// The length first, so that no two readings hash alike; -1 for a
		// file that is not there.
		n := int64(-1)
		if ok {
			n = int64(len(data))
		}
		_, _ = fmt.Fprintf(h, "%s %d\n", name, n)
		h.Write(data)
	}
	var sum [sha256.Size]byte
	copy(sum[:], h.Sum(nil))
	return sum
}

func (f files) problem(reason Reason, file string) *Problem {
	return &Problem{Secret: f.secret.Name, Reason: reason, File: file}
}

// get returns a file's content or the problem of its absence.
func (f files) get(name string) ([]byte, *Problem) {
	if err, ok := f.readErr[name]; ok {
		p := f.problem(ReasonUnreadable, name)
		p.Err = err
		return nil, p
	}
	data, ok := f.content[name]
	if !ok {
		return nil, f.problem(ReasonMissing, name)
	}
	return data, nil
}

func (f files) check(now time.Time) (*x509.Certificate, error) {
	if f.empty {
		return nil, f.problem(ReasonNotFound, "")
	}
	chain, p := f.certificates(CertFile)
	if p != nil {
		return nil, p
	}
	leaf := chain[0]
	keyPEM, p := f.get(KeyFile)
	if p != nil {
		return nil, p
	}
	key, p := f.privateKey(keyPEM)
	if p != nil {
		return nil, p
	}
	if pub, ok := leaf.PublicKey.(interface{ Equal(crypto.PublicKey) bool }); !ok || !pub.Equal(key.Public()) {
		return nil, f.problem(ReasonKeyMismatch, KeyFile)
	}
	if now.Before(leaf.NotBefore) {
		p := f.problem(ReasonNotYetValid, CertFile)
		p.At = leaf.NotBefore
		return nil, p
	}
	if now.After(leaf.NotAfter) {
		p := f.problem(ReasonExpired, CertFile)
		p.At = leaf.NotAfter
		return nil, p
	}
	if f.secret.ClientCA {
		if _, p := f.certificates(CAFile); p != nil {
			return nil, p
		}
	}
	return leaf, nil
}

// certificates parses every CERTIFICATE block of a file, as OpenSSL loads
// a chain file: the first is the one served, the rest go with it.
func (f files) certificates(name string) ([]*x509.Certificate, *Problem) {
	rest, p := f.get(name)
	if p != nil {
		return nil, p
	}
	var certs []*x509.Certificate
	for {
		var block *pem.Block
		if block, rest = pem.Decode(rest); block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			p := f.problem(ReasonMalformed, name)
			p.Err = err
			return nil, p
		}
		certs = append(certs, c)
	}
	if len(certs) == 0 {
		return nil, f.problem(ReasonNoPEM, name)
	}
	return certs, nil
}

// privateKey parses the first private key block of tls.key in the forms
// crypto/tls and OpenSSL both read: PKCS #8, PKCS #1 and SEC 1.
func (f files) privateKey(data []byte) (crypto.Signer, *Problem) {
	for {
		var block *pem.Block
		if block, data = pem.Decode(data); block == nil {
			return nil, f.problem(ReasonNoPEM, KeyFile)
		}
		if !strings.HasSuffix(block.Type, "PRIVATE KEY") {
			continue
		}
		key, err := parsePrivateKey(block)
		if err != nil {
			p := f.problem(ReasonMalformed, KeyFile)
			p.Err = err
			return nil, p
		}
		return key, nil
	}
}

func parsePrivateKey(block *pem.Block) (crypto.Signer, error) {
	switch block.Type {
	case "RSA PRIVATE KEY":
		return x509.ParsePKCS1PrivateKey(block.Bytes)
	case "EC PRIVATE KEY":
		return x509.ParseECPrivateKey(block.Bytes)
	case "PRIVATE KEY":
		key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
		if err != nil {
			return nil, err
		}
		if signer, ok := key.(crypto.Signer); ok {
			return signer, nil
		}
		return nil, fmt.Errorf("unsupported key type %T", key)
	}
	// ENCRYPTED PRIVATE KEY and the like: memcached has no passphrase.
	return nil, fmt.Errorf("a %s block, which memcached cannot load", block.Type)
}
