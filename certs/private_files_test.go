package certs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
)

// Files and directories of another user are refused, whatever their mode:
// tested by asking about this user's own as if the process ran as someone
// else, since a test cannot make files of another user's without root.
func TestPrivateFilesOfAnotherUserAreRefused(t *testing.T) {
	g := NewWithT(t)
	dir := t.TempDir()
	g.Expect(os.Chmod(dir, 0o700)).To(Succeed())
	file := filepath.Join(dir, CAFile)
	g.Expect(writePrivateFile(dir, CAFile, []byte("ca"))).To(Succeed())
	me := os.Geteuid()
	g.Expect(preparePrivateDir(dir, me)).To(Succeed(), "own directory refused")
	_, err := readPrivateFile(file, me)
	g.Expect(err).NotTo(HaveOccurred(), "own file refused")
	someoneElse := me + 1
	if err := preparePrivateDir(dir, someoneElse); err == nil || !strings.Contains(err.Error(), dir+" belongs to uid") {
		t.Errorf("another user's directory: error %v, want one naming %s and its owner", err, dir)
	}
	if _, err := readPrivateFile(file, someoneElse); err == nil || !strings.Contains(err.Error(), file+" belongs to uid") {
		t.Errorf("another user's file: error %v, want one naming %s and its owner", err, file)
	}
	if err := preparePrivateDir(file, me); err == nil || !strings.Contains(err.Error(), file) {
		t.Errorf("a file as the directory: error %v", err)
	}
}
