package controllers

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// desiredHashAnnotation is put on every object the operator applies: a hash
// of the object as the operator wants it. When an object must be written
// although the hash on it is the one the operator would write, the operator
// has not changed its mind since its last write: someone else changed the
// object, and the write is a repair. When the hash differs, the Memcached or
// the operator's configuration changed, and the write is an update.
const desiredHashAnnotation = "cache.example.com/desired-hash"

// desiredHash is the annotation for the apply configuration cfg, which must
// not carry it yet. encoding/json writes struct fields in order and map keys
// sorted, so equal configurations hash equal.
func desiredHash(cfg any) map[string]string {
	data, err := json.Marshal(cfg)
	if err != nil {
		// Not reached: apply configurations are plain data.
		panic(err)
	}
	sum := sha256.Sum256(data)
	return map[string]string{desiredHashAnnotation: hex.EncodeToString(sum[:8])}
}

// isRepair reports whether writing want over live undoes someone else's
// change (see desiredHashAnnotation). Both must exist.
func isRepair(live, want map[string]string) bool {
	return live[desiredHashAnnotation] != "" && live[desiredHashAnnotation] == want[desiredHashAnnotation]
}
