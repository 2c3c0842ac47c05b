package certs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Local mode keeps its serving key, and the CA it puts into the webhook
// configurations, in files only this user may write and read: whoever could
// read the key, or plant a CA or key of their own there, could answer the
// API server's webhook calls in the operator's place.

// preparePrivateDir makes dir (mode 0700) if it is missing, and refuses it
// unless it is a directory of this user's (uid) that no group or other user
// can write: anyone who can write it could swap the files in it.
func preparePrivateDir(dir string, uid int) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	return checkPrivateDir(dir, fi, uid)
}

func checkPrivateDir(dir string, fi fs.FileInfo, uid int) error {
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	if err := checkOwner(dir, fi, uid); err != nil {
		return err
	}
	if perm := fi.Mode().Perm(); perm&0o022 != 0 {
		return fmt.Errorf("directory %s can be written by group or others (mode %04o): make it 0700, or remove it to have it made again",
			dir, perm)
	}
	return nil
}

// readPrivateFile reads a file as writePrivateFile leaves it: a regular
// file, not a symbolic link, of this user's, that no group or other user can
// read or write. Anything else may have been planted, or its contents seen.
func readPrivateFile(path string, uid int) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if errors.Is(err, syscall.ELOOP) {
		return nil, fmt.Errorf("%s is a symbolic link", path)
	}
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	// The open file, not the path, is checked: the path may change.
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if err := checkPrivateFile(path, fi, uid); err != nil {
		return nil, err
	}
	return io.ReadAll(f)
}

func checkPrivateFile(path string, fi fs.FileInfo, uid int) error {
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", path)
	}
	if err := checkOwner(path, fi, uid); err != nil {
		return err
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("%s is open to group or others (mode %04o)", path, perm)
	}
	return nil
}

func checkOwner(path string, fi fs.FileInfo, uid int) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Errorf("%s: cannot tell its owner", path)
	}
	if int(st.Uid) != uid {
		return fmt.Errorf("%s belongs to uid %d, not to this user (uid %d)", path, st.Uid, uid)
	}
	return nil
}

// writePrivateFile replaces dir/name with data, mode 0600. The data goes
// into a new file of a random name (created exclusively, so never through
// a link or into a file someone else opened) that is then renamed over
// name: a link at name is replaced, not followed, and a run that is
// interrupted leaves the old file or the new one.
func writePrivateFile(dir, name string, data []byte) (err error) {
	f, err := os.CreateTemp(dir, "."+name+".*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = os.Remove(f.Name())
		}
	}()
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), filepath.Join(dir, name))
}
