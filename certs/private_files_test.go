package certs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Files and directories of another user are refused, whatever their mode:
// tested by asking about this user's own as if the process ran as someone
// else, since a test cannot make files of another user's without root.
func TestPrivateFilesOfAnotherUserAreRefused(t *testing.T) {
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, CAFile)
	if err := writePrivateFile(dir, CAFile, []byte("ca")); err != nil {
		t.Fatal(err)
	}
	me := os.Geteuid()
	if err := preparePrivateDir(dir, me); err != nil {
		t.Fatalf("own directory refused: %v", err)
	}
	if _, err := readPrivateFile(file, me); err != nil {
		t.Fatalf("own file refused: %v", err)
	}
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
