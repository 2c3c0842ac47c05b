package certstest

import (
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
)

func TestWriteSecretVolumeSwapsTheWholeSet(t *testing.T) {
	dir := t.TempDir()
	steps := []map[string][]byte{
		{"tls.crt": []byte("cert 1"), "tls.key": []byte("key 1")},
		{"tls.crt": []byte("cert 2"), "tls.key": []byte("key 2"), "ca.crt": []byte("ca 2")},
		{"tls.crt": []byte("cert 3"), "tls.key": []byte("key 3")},
	}
	for i, data := range steps {
		NewWithT(t).Expect(WriteSecretVolume(dir, data)).To(Succeed(), "step %d", i)
		for key, want := range data {
			got, err := os.ReadFile(filepath.Join(dir, key))
			if err != nil || string(got) != string(want) {
				t.Fatalf("step %d: %s = %q, %v; want %q", i, key, got, err, want)
			}
			fi, err := os.Lstat(filepath.Join(dir, key))
			if err != nil || fi.Mode()&os.ModeSymlink == 0 {
				t.Fatalf("step %d: %s is not a symlink (%v)", i, key, err)
			}
		}
		entries, err := os.ReadDir(dir)
		NewWithT(t).Expect(err).NotTo(HaveOccurred())
		// The keys, ..data and exactly one timestamped directory.
		if len(entries) != len(data)+2 {
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			t.Fatalf("step %d: entries %v", i, names)
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, "ca.crt")); !os.IsNotExist(err) {
		t.Fatalf("ca.crt should be gone after the last step, got %v", err)
	}
}

func TestWriteSecretVolumeRejectsPaths(t *testing.T) {
	for _, key := range []string{"", "..data", "a/b"} {
		if err := WriteSecretVolume(t.TempDir(), map[string][]byte{key: nil}); err == nil {
			t.Errorf("key %q: want an error", key)
		}
	}
}
