package certstest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

const dataLink = "..data"

// WriteSecretVolume makes dir hold exactly the keys of data, as kubelet updates a Secret
// volume: a new timestamped directory, an atomic swap of the ..data symlink,
// a symlink per key, and the previous directory removed. dir is created if
// needed. Keys must be plain file names.
func WriteSecretVolume(dir string, data map[string][]byte) error {
	for key := range data {
		if key == "" || strings.HasPrefix(key, "..") || strings.ContainsRune(key, filepath.Separator) {
			return fmt.Errorf("secret volume: %q is not a plain file name", key)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	oldTarget, err := os.Readlink(filepath.Join(dir, dataLink))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}

	tsDir, err := os.MkdirTemp(dir, ".."+time.Now().UTC().Format("2006_01_02_15_04_05."))
	if err != nil {
		return err
	}
	for key, value := range data {
		if err := os.WriteFile(filepath.Join(tsDir, key), value, 0o600); err != nil {
			return err
		}
	}

	// The swap: a new symlink under a temporary name, renamed over ..data.
	tmpLink := filepath.Join(dir, "..data_tmp")
	_ = os.Remove(tmpLink)
	if err := os.Symlink(filepath.Base(tsDir), tmpLink); err != nil {
		return err
	}
	if err := os.Rename(tmpLink, filepath.Join(dir, dataLink)); err != nil {
		return err
	}

	for key := range data {
		link := filepath.Join(dir, key)
		if _, err := os.Lstat(link); err == nil {
			continue // already a symlink through ..data
		}
		if err := os.Symlink(filepath.Join(dataLink, key), link); err != nil {
			return err
		}
	}
	// Keys that the Secret no longer has disappear, as with kubelet.
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "..") {
			continue
		}
		if _, ok := data[e.Name()]; !ok && e.Type()&os.ModeSymlink != 0 {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	if oldTarget != "" && oldTarget != filepath.Base(tsDir) {
		return os.RemoveAll(filepath.Join(dir, oldTarget))
	}
	return nil
}
